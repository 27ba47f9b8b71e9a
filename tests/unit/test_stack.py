"""Versions (packaging's, PEP 440): order, build labels, the questions the gates ask; the Stack."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version
from pydantic import ValidationError

from advisor.core.model.stack import (
    Stack,
    cuda_of_tag,
    cuda_tag,
    default_needs,
    is_prerelease,
    not_past,
    parse_version,
    pick_torch_build,
    rocm_of_tag,
    same_build,
    same_public_version,
    same_release,
    try_parse_version,
    version_at_least,
)

releases = st.lists(st.integers(0, 30), min_size=1, max_size=4)
pres = st.one_of(st.none(), st.tuples(st.sampled_from(["a", "b", "rc"]), st.integers(0, 30)))
nums = st.one_of(st.none(), st.integers(0, 20250999))
locals_ = st.one_of(st.none(), st.sampled_from(["cu128", "cpu", "rocm6.3", "git7c8ec84.nv25.3"]))


@st.composite
def versions(draw: st.DrawFn) -> str:
    text = ".".join(map(str, draw(releases)))
    if (pre := draw(pres)) is not None:
        text += f"{pre[0]}{pre[1]}"
    if (post := draw(nums)) is not None:
        text += f".post{post}"
    if (dev := draw(nums)) is not None:
        text += f".dev{dev}"
    if (local := draw(locals_)) is not None:
        text += f"+{local}"
    return text


class TestParseVersion:
    @given(versions())
    def test_reads_as_packaging_does(self, a: str) -> None:
        assert parse_version(f" {a} ") == Version(a)

    @given(versions(), versions(), versions())
    def test_keys_form_a_total_order(self, a: str, b: str, c: str) -> None:
        """Every slot has one type, so any two keys compare (no TypeError) and order totally."""
        ka, kb, kc = parse_version(a), parse_version(b), parse_version(c)
        assert [ka < kb, ka == kb, ka > kb].count(True) == 1
        if ka <= kb <= kc:
            assert ka <= kc

    @given(releases, st.sampled_from(["a1", "b22", "rc1", ".dev20250916", "a0.dev1"]))
    def test_prerelease_sorts_below_release(self, rel: list[int], suffix: str) -> None:
        base = ".".join(map(str, rel))
        assert parse_version(base + suffix) < parse_version(base)
        assert is_prerelease(base + suffix) and not is_prerelease(base)

    @given(versions(), locals_, locals_)
    def test_a_build_label_counts_for_same_build_only(
        self, v: str, one: str | None, other: str | None
    ) -> None:
        bare = v.split("+")[0]
        a, b = bare + (f"+{one}" if one else ""), bare + (f"+{other}" if other else "")
        assert same_public_version(a, b) and same_release(a, b)
        assert same_build(a, b) is (one == other)

    def test_cuda_builds_differ(self) -> None:
        assert not same_build("2.7.1+cu128", "2.7.1+cu130")
        assert same_build("2.7.1+cu128", "2.7.1.0+cu128")
        assert same_public_version("2.7.1+cu128", "2.7.1+cu130")
        assert parse_version("2.7.1+cu128") != parse_version("2.7.1+cu130")

    def test_same_release_ignores_the_pre_release_part(self) -> None:
        assert same_release("2.7.0a0+7c8ec84dab.nv25.03", "2.7")
        assert not same_public_version("2.7.0a0", "2.7")
        assert not same_release("2.7.1", "2.7")

    @pytest.mark.parametrize(
        ("a", "b"),
        [
            ("2.7.0+cu128", "2.7+cu128"),
            ("2.7", "2.7.0.0"),
            ("V2.7", "2.7"),
            ("1.0-1", "1.0.post1"),
            ("4.0.0beta5", "4.0.0b5"),
            ("1!0.1", "1!0.1.0"),
        ],
    )
    def test_equal_spellings(self, a: str, b: str) -> None:
        assert parse_version(a) == parse_version(b)

    @pytest.mark.parametrize(
        ("lo", "hi"),
        [
            ("4.0.0b22", "4.0.0"),
            ("4.0.0b5", "4.0.0b22"),
            ("2.10.0.dev20250916", "2.10.0"),
            ("2.10.0.dev20250916", "2.10.0a0"),
            ("12.8", "12.10"),
            ("2.9", "2.10"),
            ("2.7.0a0+7c8ec84dab.nv25.03", "2.7"),
            ("1.0", "1.0.post1"),
            ("9", "1!0"),
        ],
    )
    def test_ordered(self, lo: str, hi: str) -> None:
        assert parse_version(lo) < parse_version(hi)

    @pytest.mark.parametrize("bad", ["", "latest", "source build (hopper/)", "5.x", "2.7 beta"])
    def test_rejects_prose(self, bad: str) -> None:
        with pytest.raises(ValueError, match="not a version"):
            parse_version(bad)

    def test_try_parse_reads_a_leading_version_only(self) -> None:
        assert try_parse_version("2.13 (cu126 wheels only)") == parse_version("2.13")
        assert try_parse_version("source build (hopper/)") is None
        assert try_parse_version("") is None


class TestComparisons:
    def test_version_at_least(self) -> None:
        assert version_at_least("2.7.1+cu128", "2.7")
        assert version_at_least("4.0.0b22", "4.0.0b0")
        assert not version_at_least("4.0.0b22", "4.0.0")
        assert not version_at_least("2.6.0+cu126", "2.7")
        assert version_at_least("0.1", "")

    @pytest.mark.parametrize(
        ("installed", "last", "within"),
        [
            ("12.9.1", "12.9", True),
            ("12.9", "12.9", True),
            ("13.0", "12.9", False),
            ("13.1", "13.0", False),
            ("13", "13.0", True),
            ("2.13.0+cu126", "2.13", True),
        ],
    )
    def test_not_past(self, installed: str, last: str, within: bool) -> None:
        assert not_past(installed, last) is within

    def test_wheel_tags(self) -> None:
        assert cuda_tag("12.8") == "cu128" and cuda_tag("13.0.1") == "cu130"
        assert cuda_of_tag("cu128") == "12.8" and cuda_of_tag("cu92") == "9.2"
        assert cuda_of_tag("rocm6.3") is None and rocm_of_tag("rocm6.2.4") == "6.2.4"

    @pytest.mark.parametrize(
        ("floor", "flavour", "need", "choice"),
        [
            ("2.7", "cuda", "12.8", ("2.7", "cu128")),
            ("2.6", "cuda", "12.8", ("2.7", "cu128")),
            ("2.12", "cuda", "12.8", ("2.12", "cu130")),
            ("2.13.0", "cuda", "11.8", ("2.13", "cu126")),
            ("2.9", "rocm", "7.1", ("2.10", "rocm7.1")),
            ("2.14", "cuda", "12.8", None),
        ],
    )
    def test_pick_torch_build(
        self, floor: str, flavour: str, need: str, choice: tuple[str, str] | None
    ) -> None:
        assert pick_torch_build(floor, flavour, need) == choice  # type: ignore[arg-type]


class TestStack:
    def test_build_and_cuda_come_from_the_torch_label(self) -> None:
        s = Stack(source="declared", packages={"torch": "2.7.1+cu128"})
        assert (s.torch_build, s.cuda, s.hip, s.flavour) == ("cu128", "12.8", None, "cuda")

    def test_build_comes_from_cuda_or_hip(self) -> None:
        assert (
            Stack(source="detected", packages={"torch": "2.8.0"}, cuda="12.9").torch_build
            == "cu129"
        )
        rocm = Stack(source="detected", packages={"torch": "2.9.0"}, hip="6.4.43482")
        assert (rocm.torch_build, rocm.flavour) == ("rocm6.4", "rocm")

    def test_gaudi_label_is_the_hpu_build(self) -> None:
        s = Stack(source="detected", packages={"torch": "2.6.0+hpu_1.21.2-76.gitabf798b"})
        assert (s.torch_build, s.flavour, s.cuda) == ("hpu", "hpu", None)
        assert Stack(source="detected", packages={"torch": "2.7.0+git7c8ec84"}).torch_build is None

    def test_describe_torch_adds_the_build(self) -> None:
        s = Stack(source="declared", packages={"torch": "2.8.0"}, torch_build="cu128")
        assert s.describe_torch() == "2.8.0+cu128"
        assert (
            Stack(source="declared", packages={"torch": "2.8.0+cpu"}).describe_torch()
            == "2.8.0+cpu"
        )

    def test_package_names_are_normalized_and_needs_default(self) -> None:
        s = Stack(
            source="declared", packages={"torch": "2.9", "Flash_Attn": "2.8.3", "vllm": "0.9"}
        )
        assert "flash-attn" in s.packages
        assert s.needs == ["torch", "flash-attn", "vllm"]  # declared: every package is used
        detected = Stack(source="detected", packages=dict(s.packages))
        assert detected.needs == ["torch", "flash-attn"]  # installed is not used
        assert default_needs({"flash-attn-4": "4.0.0b1", "torch": "2.9"}, "detected") == [
            "torch",
            "flash-attn-4",
        ]

    def test_declared_needs_win_and_are_deduplicated(self) -> None:
        s = Stack(
            source="declared",
            packages={"torch": "2.9", "flash-attn": "2.8"},
            needs=["Transformer_Engine", "transformer-engine"],
        )
        assert s.needs == ["transformer-engine"]

    def test_sdpa_backends_carry_torch_version(self) -> None:
        s = Stack(source="declared", packages={"torch": "2.9.0+cu128"})
        assert s.version_of("torch-sdpa-cudnn") == "2.9.0+cu128"
        assert s.version_of("flash-attn") is None

    @pytest.mark.parametrize(
        ("data", "words"),
        [
            ({"packages": {"torch": "two"}}, "not a version"),
            ({"packages": {"torch": "2.9"}, "torch_build": "cuda12"}, "cuNNN"),
            ({"packages": {"torch": "2.9+cu126"}, "cuda": "12.8"}, "disagrees"),
            ({"packages": {"torch": "2.9"}, "driver": "latest"}, "not a version"),
            ({"packages": {"torch": "2.9"}, "cuda": "twelve"}, "not a version"),
            ({"packages": {"torch": "2.9"}, "extra": 1}, "Extra inputs"),
        ],
    )
    def test_rejects_bad_input(self, data: dict[str, object], words: str) -> None:
        with pytest.raises(ValidationError, match=words):
            Stack.model_validate({"source": "declared", **data})

    def test_frozen(self) -> None:
        s = Stack(source="declared", packages={"torch": "2.9"})
        with pytest.raises(ValidationError):
            s.cuda = "12.8"  # type: ignore[misc]
