"""The software stack a workload runs on, and version comparison.

A stack is either detected on this box (`advisor.io.detect`) or declared by the
user; the software gate compares it with the catalog's support rows. Versions
are PEP 440 versions from `packaging` (a pure library, fine for the core):
"4.0.0b22" < "4.0.0", "2.10.0.dev20250916" < "2.10.0", and a build label counts
where the question is "same build?" ("2.7.1+cu128" is not "2.7.1+cu130").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from advisor.core.model import bounds as B
from advisor.core.model.printable import PrintableModel

if TYPE_CHECKING:
    from packaging.version import Version

# pip distributions of attention kernels: FA2, FA3 and FA4 are separate packages
# (FA4 installs into the flash_attn namespace but has no FA2 API: transformers #44559).
ATTENTION_KERNELS: tuple[str, ...] = ("flash-attn", "flash-attn-3", "flash-attn-4")

# Accelerator builds of the official torch wheels per release, stable and experimental
# (pytorch/pytorch RELEASE.md matrix, as quoted in PRs #164471, #175253, #182849).
# The index URL of a build is https://download.pytorch.org/whl/<tag>.
TORCH_WHEEL_BUILDS: dict[str, tuple[str, ...]] = {
    "2.6": ("cu118", "cu124", "cu126", "rocm6.2.4"),
    "2.7": ("cu118", "cu126", "cu128", "rocm6.3"),
    "2.8": ("cu126", "cu128", "cu129", "rocm6.4"),
    "2.9": ("cu126", "cu128", "cu130", "rocm6.4"),
    "2.10": ("cu126", "cu128", "cu130", "rocm7.1"),
    "2.11": ("cu126", "cu128", "cu130", "rocm7.2"),
    "2.12": ("cu126", "cu130", "cu132", "rocm7.2"),
    "2.13": ("cu126", "cu130", "cu132", "rocm7.2"),
}

def parse_version(text: str) -> Version:
    """A PEP 440 version, as `packaging` reads it ("v2.7", "4.0.0beta5", "1.0-1" too).

    Versions order as PEP 440 says: dev < pre-releases < the release < post-releases, and
    "2.7" == "2.7.0". A local build label counts: "2.7.1+cu128" and "2.7.1+cu130" are
    different builds (`same_build`) of one release (`same_release`).
    """
    # packaging loads with the first version read, not with every command (~2 ms)
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text.strip())
    except InvalidVersion:
        raise ValueError(f"not a version: {text!r}") from None


def try_parse_version(text: str) -> Version | None:
    """The version of the first whitespace-separated token, or None.

    Catalog fields sometimes carry prose ("2.13 (cu126 wheels only)",
    "source build (hopper/)"); those count as versions only when they start
    with one.
    """
    token = text.strip().split(" ", 1)[0] if text.strip() else ""
    try:
        return parse_version(token) if token else None
    except ValueError:
        return None


def _public(v: Version) -> Version:
    return parse_version(v.public) if v.local else v


def version_at_least(installed: str, required: str) -> bool:
    """True when `installed` satisfies a `>= required` floor; a blank floor always does.

    As in a PEP 440 `>=` specifier, the installed build label does not matter:
    "2.7.1+cu128" is at least "2.7".
    """
    if not required.strip():
        return True
    need = parse_version(required)
    have = parse_version(installed)
    return (have if need.local else _public(have)) >= need


def same_build(a: str, b: str) -> bool:
    """The same version and the same build: "2.7.1+cu128" is not "2.7.1+cu130" (nor a
    bare "2.7.1"), but it is "2.7.1.0+cu128". A different CUDA build can change speed."""
    return parse_version(a) == parse_version(b)


def same_public_version(a: str, b: str) -> bool:
    """The same version whatever the build label: "2.7.1+cu128" and "2.7.1+cu130" are
    both 2.7.1; "2.7.0a0" is not "2.7.0"."""
    return _public(parse_version(a)) == _public(parse_version(b))


def same_release(a: str, b: str) -> bool:
    """The same release numbers, whatever the pre/post/dev part or build label:
    "2.7.0a0+7c8ec84" (an NGC build) is a 2.7 release, like "2.7" and "2.7.1+cu128" is not."""
    return parse_version(parse_version(a).base_version) == \
        parse_version(parse_version(b).base_version)


def is_prerelease(text: str) -> bool:
    """An alpha/beta/rc or dev build, e.g. NGC's "2.7.0a0+7c8ec84" or a nightly."""
    return parse_version(text).is_prerelease


def release_as_written(text: str) -> tuple[int, ...]:
    """The dotted numbers as written, zeros kept: "13.0" -> (13, 0), for "up to" bounds."""
    m = re.match(r"\s*v?(?:\d+!)?(\d+(?:\.\d+)*)", text)
    if m is None:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(p) for p in m[1].split("."))


def not_past(installed: str, last: str) -> bool:
    """True when `installed` is still within the `last` series: 12.9.1 is within 12.9."""
    bound = release_as_written(last)
    mine = release_as_written(installed) + (0,) * len(bound)
    return mine[: len(bound)] <= bound


def pick_torch_build(floor: str, flavour: str, need: str | None) -> tuple[str, str] | None:
    """(torch release, wheel tag) of the first official build at or after `floor`
    whose CUDA/ROCm is at least `need`; None past the table's end."""
    start = release_as_written(floor)[:2]
    for minor, tags in TORCH_WHEEL_BUILDS.items():
        if release_as_written(minor) < start:
            continue
        for tag in tags:
            runtime = cuda_of_tag(tag) if flavour == "cuda" else rocm_of_tag(tag)
            if runtime and (need is None or version_at_least(runtime, need)):
                return minor, tag
    return None


def local_label(text: str) -> str | None:
    """The part after '+': "cu128" in "2.7.1+cu128"."""
    return text.partition("+")[2] or None


def cuda_tag(cuda: str) -> str:
    """CUDA "12.8" -> wheel tag "cu128"."""
    parts = cuda.split(".")
    return f"cu{int(parts[0])}{int(parts[1]) if len(parts) > 1 else 0}"


def cuda_of_tag(tag: str) -> str | None:
    """Wheel tag "cu128" -> "12.8", "cu92" -> "9.2"; None for anything else."""
    m = re.fullmatch(r"cu(\d{2,4})", tag.strip().lower())
    if m is None:
        return None
    digits = m[1]
    major_len = 1 if len(digits) == 2 else 2
    return f"{int(digits[:major_len])}.{int(digits[major_len:])}"


def rocm_of_tag(tag: str) -> str | None:
    """Wheel tag "rocm6.3" -> "6.3"; None for anything else."""
    m = re.fullmatch(r"rocm(\d+(?:\.\d+)*)", tag.strip().lower())
    return m[1] if m else None


_BUILD = re.compile(r"cu\d{2,4}|rocm\d+(?:\.\d+)*|cpu|xpu|hpu")
# The build at the head of a local label: "cu128", "rocm6.3", "hpu_1.21.2" (Intel Gaudi).
_LABEL_BUILD = re.compile(rf"({_BUILD.pattern})(?:$|[_-])")
_PACKAGE_ID = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")


def normalize_package(name: str) -> str:
    """PEP 503 style: "Flash_Attn" -> "flash-attn", to match catalog package ids."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def default_needs(packages: dict[str, str], source: str = "declared") -> list[str]:
    """What the software gate checks when `needs` is not given. A declared stack is the
    user's list of what the workload runs on, so every package in it; a detected one is
    whatever this box has installed, so torch plus the attention kernels, what most
    workloads rely on."""
    if source == "declared":  # a JAX stack needs no torch
        head = ["torch"] if "torch" in packages or "jax" not in packages else []
        return [*head, *(k for k in packages if k != "torch")]
    return ["torch", *(k for k in ATTENTION_KERNELS if k in packages)]


class Stack(PrintableModel):
    """What the workload runs on: package versions and the torch build.

    `torch_build`, `cuda` and `hip` fill each other in when one is known
    ("2.7.1+cu128" gives cu128 and 12.8), so a declared stack can be terse.
    `needs` defaults to every declared package (for a detected stack: torch plus the
    installed attention kernels).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["detected", "declared"]
    packages: dict[str, str] = Field(max_length=B.MAX_PACKAGES)
    torch_build: str | None = None
    cuda: str | None = None
    hip: str | None = None
    driver: str | None = None
    needs: list[str] = Field(default_factory=list, max_length=B.MAX_PACKAGES)

    @model_validator(mode="before")
    @classmethod
    def _fill(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        packages = data.get("packages")
        if isinstance(packages, dict):
            packages = {normalize_package(str(k)): v for k, v in packages.items()}
            data["packages"] = packages
            if "needs" not in data:
                data["needs"] = default_needs(packages, str(data.get("source", "declared")))
        torch = packages.get("torch") if isinstance(packages, dict) else None
        build = data.get("torch_build")
        if build is None and isinstance(torch, str):
            m = _LABEL_BUILD.match((local_label(torch) or "").lower())
            if m:
                build = m[1]
        if build is None and data.get("cuda") and try_parse_version(str(data["cuda"])):
            build = cuda_tag(str(data["cuda"]))
        if build is None and data.get("hip") and try_parse_version(str(data["hip"])):
            build = "rocm" + ".".join(str(data["hip"]).split(".")[:2])
        if isinstance(build, str):
            build = build.strip().lower()
            data["torch_build"] = build
            if data.get("cuda") is None and cuda_of_tag(build):
                data["cuda"] = cuda_of_tag(build)
            if data.get("hip") is None and rocm_of_tag(build):
                data["hip"] = rocm_of_tag(build)
        return data

    @field_validator("packages")
    @classmethod
    def _versions_parse(cls, v: dict[str, str]) -> dict[str, str]:
        for name, version in v.items():
            if not _PACKAGE_ID.fullmatch(name):
                raise ValueError(f"package id {name!r} is not a valid name")
            try:
                parse_version(version)
            except ValueError:
                raise ValueError(f"{name} version {version!r} is not a version") from None
        return v

    @field_validator("torch_build")
    @classmethod
    def _build_form(cls, v: str | None) -> str | None:
        if v is not None and not _BUILD.fullmatch(v):
            raise ValueError(f"torch build {v!r} is not one of cuNNN, rocmX.Y, cpu, xpu, hpu")
        return v

    @field_validator("cuda", "hip", "driver")
    @classmethod
    def _runtime_parses(cls, v: str | None) -> str | None:
        if v is not None and try_parse_version(v) is None:
            raise ValueError(f"{v!r} is not a version")
        return v

    @field_validator("needs")
    @classmethod
    def _needs_ids(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(normalize_package(n) for n in v))

    @model_validator(mode="after")
    def _build_agrees(self) -> Stack:
        b = self.torch_build
        if b and self.cuda and cuda_of_tag(b) and cuda_tag(self.cuda) != b:
            raise ValueError(f"torch build {self.torch_build} disagrees with cuda {self.cuda}")
        return self

    @property
    def flavour(self) -> Literal["cuda", "rocm", "cpu", "xpu", "hpu"] | None:
        """Which accelerator runtime the torch build targets; None when not stated."""
        b = self.torch_build
        if b is None:
            return None
        if b.startswith("cu"):
            return "cuda"
        if b.startswith("rocm"):
            return "rocm"
        return "cpu" if b == "cpu" else "hpu" if b == "hpu" else "xpu"

    @property
    def torch(self) -> str | None:
        return self.packages.get("torch")

    def version_of(self, package: str) -> str | None:
        """Installed version; torch's built-in backends (torch-sdpa-*) carry torch's version."""
        pkg = normalize_package(package)
        if pkg in self.packages:
            return self.packages[pkg]
        if pkg.startswith("torch-"):
            return self.torch
        return None

    def describe_torch(self) -> str:
        """ "2.6.0+cu126" style, adding the build when the version lacks it."""
        t = self.torch or "?"
        if self.torch_build and local_label(t) is None:
            return f"{t}+{self.torch_build}"
        return t


def parse_stack(text: str) -> Stack:
    """A declared stack as typed: "torch==2.7.1+cu128 flash-attn==2.8.3" (spaces or commas;
    `=` for `==` too). Every package named is one the job needs, so the gate checks each;
    torch is named unless it is a JAX stack. ValueError with the message to show."""
    from pydantic import ValidationError

    packages: dict[str, str] = {}
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        name, sep, version = item.partition("==") if "==" in item else item.partition("=")
        if not sep or not name or not version:
            raise ValueError(f"{item}: write package==version, e.g. torch==2.7.1+cu128")
        if name in packages:
            raise ValueError(f"{name} is listed twice")
        packages[name] = version
    if "torch" not in packages and "jax" not in packages:
        raise ValueError("name the torch build, e.g. torch==2.7.1+cu128 (or jax for a JAX stack)")
    try:
        return Stack(source="declared", packages=packages, needs=list(packages))
    except ValidationError as exc:
        raise ValueError(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None


def format_stack(stack: Stack) -> str:
    """The stack as `parse_stack` reads it back."""
    return " ".join(f"{name}=={version}" for name, version in stack.packages.items())
