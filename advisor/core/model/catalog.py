"""The catalog: GPU specs, architecture number formats, software support and default prices.

The TOML files in the `catalog` package are data; these models are the schema.
Everything is validated at load, so a bad figure fails loudly with one line
naming the file, the entry, the field and the value, instead of quietly
skewing a projection.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from advisor.core.errors import InputError
from advisor.core.formats import parse_toml, validation_error
from advisor.core.model import bounds as B
from advisor.core.model.strict import Day, StrictInput
from advisor.core.text import refuse_control

PeakDtype = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "nvfp4", "int8"]
PEAK_DTYPES: tuple[str, ...] = get_args(PeakDtype)

HwFormat = Literal[
    "fp64",
    "fp32",
    "tf32",
    "bf16",
    "fp16",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_e4m3fnuz",
    "fp8_e5m2fnuz",
    "fp6_e2m3",
    "fp6_e3m2",
    "fp4_e2m1",
    "mxfp8",
    "mxfp6",
    "mxfp4",
    "nvfp4",
    "int8",
    "int4",
    "int1",
]

Vendor = Literal["NVIDIA", "AMD", "Intel", "Google", "AWS"]
SupportStatus = Literal["ga", "beta", "unsupported"]

CATALOG_FILES = ("gpus.toml", "archs.toml", "software.toml", "prices.toml")

# Text lists and notes, capped (bounds.py says why): a pulled entry is merged, validated and
# written back, and every step must stay linear in what the team's file holds.
Note = Annotated[str, Field(max_length=B.MAX_NOTE_CHARS)]


def _plain(name: str) -> str:
    """A GPU is named in printable ASCII, as every vendor names its parts: a look-alike
    letter (Cyrillic Н for H) would show exactly as another GPU's name and pass the
    clash check, which compares letters and digits. A control character is named as one."""
    refuse_control(name, "catalog text")
    if not all(" " <= ch <= "~" for ch in name):
        bad = next(ch for ch in name if not " " <= ch <= "~")
        raise ValueError(f"a GPU's names are plain ASCII: {bad!a} could pass for another "
                         "GPU's letter")
    return name


GpuName = Annotated[str, Field(max_length=B.MAX_NAME_CHARS), AfterValidator(_plain)]
Citations = Annotated[list[Note], Field(min_length=1, max_length=B.MAX_CITATIONS)]


class _Strict(StrictInput):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _no_control_characters(cls, v: Any) -> Any:
        """Catalog text is shown everywhere (tables, the wizard, reports): a pulled GPU name
        holding an escape sequence is refused here, before it is cached."""
        refuse_control(v, "catalog text")
        return v


class Sourced(_Strict):
    """A group of figures that share one citation and one retrieval date."""

    source: Citations
    retrieved: Day
    note: Note = ""

    @field_validator("source")
    @classmethod
    def _non_blank(cls, v: list[str]) -> list[str]:
        if any(not s.strip() for s in v):
            raise ValueError("a source citation is blank")
        return v


class Memory(Sourced):
    gib: float = Field(gt=1, le=B.MAX_GPU_MEMORY_GIB,
                       description="capacity as labelled by the vendor")
    kind: str = Field(min_length=2, description="HBM3, HBM3e, GDDR7, ...")
    bandwidth_tbps: float = Field(gt=0.05, le=30, description="peak, decimal TB/s")


class Interconnect(_Strict):
    """Scale-up link between GPUs, and the host link."""

    kind: str = Field(min_length=2)
    gbps: float = Field(gt=1, le=20000, description="decimal GB/s per GPU")
    direction: Literal["bidirectional", "unidirectional"]
    domain_gpus: int = Field(
        default=1, ge=1, le=576,
        description="GPUs one scale-up domain joins (8 in an HGX node, 72 in an NVL72 rack); "
                    "1 when GPUs talk over PCIe only")
    host_link: str | None = None
    source: Citations
    retrieved: Day
    note: Note = ""

    @property
    def unidirectional_gbps(self) -> float:
        return self.gbps / 2 if self.direction == "bidirectional" else self.gbps


class Measured(Sourced):
    """Kernel-level measurements of the memory system and the scale-up link."""

    hbm_tbps: float | None = Field(default=None, gt=0.01, le=30,
                                   description="large device-to-device copy, decimal TB/s")
    busbw_gbps: float | None = Field(default=None, gt=0.1, le=20000,
                                     description="all-reduce bus bandwidth, large messages, "
                                                 "a full scale-up domain")


class Power(Sourced):
    tdp_w: float | None = Field(default=None, gt=10, le=3000)
    idle_w: float | None = Field(default=None, gt=0, le=500)

    @model_validator(mode="after")
    def _idle_below_tdp(self) -> Power:
        if self.tdp_w is not None and self.idle_w is not None and self.idle_w >= self.tdp_w:
            raise ValueError(f"idle_w {self.idle_w} is not below tdp_w {self.tdp_w}")
        return self


class Peaks(Sourced):
    """Dense (no sparsity) theoretical peaks, TFLOPS (int8: TOPS)."""

    fp32: float | None = Field(default=None, gt=0.1, le=100000)
    tf32: float | None = Field(default=None, gt=0.1, le=100000)
    bf16: float | None = Field(default=None, gt=0.1, le=100000)
    fp16: float | None = Field(default=None, gt=0.1, le=100000)
    fp8: float | None = Field(default=None, gt=0.1, le=100000)
    fp6: float | None = Field(default=None, gt=0.1, le=100000)
    fp4: float | None = Field(default=None, gt=0.1, le=100000)
    nvfp4: float | None = Field(default=None, gt=0.1, le=100000)
    int8: float | None = Field(default=None, gt=0.1, le=100000)
    sparse_halved: bool = Field(
        default=False, description="true when the vendor published sparse figures and we store half"
    )

    @model_validator(mode="after")
    def _dtype_ordering(self) -> Peaks:
        chain = [("bf16", self.bf16), ("fp8", self.fp8), ("fp4", self.fp4)]
        present = [(k, v) for k, v in chain if v is not None]
        for (lo_k, lo), (hi_k, hi) in itertools.pairwise(present):
            if hi < lo:
                raise ValueError(f"{hi_k} peak {hi} is below {lo_k} peak {lo}")
        return self

    def get(self, dtype: str) -> float | None:
        return getattr(self, dtype, None) if dtype in PEAK_DTYPES else None

    def items(self) -> list[tuple[str, float]]:
        return [(d, v) for d in PEAK_DTYPES if (v := self.get(d)) is not None]


class Mamf(Sourced):
    """Published Maximum Achievable Matmul FLOPS for one dtype."""

    tflops: float = Field(gt=0.1, le=100000)
    shape: str = Field(pattern=r"^\d+x\d+x\d+$", description="MxNxK of the best shape")
    torch: str | None = None


class GemmShapes(Sourced):
    """How the rate moves with a GEMM's output width n and reduction depth k, at m rows, as a
    share of the large-shape rate: a tensor-parallel slice of a layer, or a narrow expert, fills
    fewer tiles and runs a shorter K loop than the median's shapes."""

    m: int = Field(ge=1, le=1 << 20)
    n: list[int] = Field(min_length=2, max_length=16)
    k: list[int] = Field(min_length=2, max_length=16)
    of_large: list[list[float]] = Field(description="rows by n, columns by k")

    @model_validator(mode="after")
    def _grid(self) -> GemmShapes:
        for name, axis in (("n", self.n), ("k", self.k)):
            if any(a < 1 or b <= a for a, b in itertools.pairwise(axis)) or axis[0] < 1:
                raise ValueError(f"shapes.{name} must increase from 1 up")
        if len(self.of_large) != len(self.n) or any(len(r) != len(self.k)
                                                    for r in self.of_large):
            raise ValueError(f"shapes.of_large must be {len(self.n)} rows of {len(self.k)}")
        if any(not 0 < v <= 4 for r in self.of_large for v in r):
            raise ValueError("shapes.of_large values must be above 0 and at most 4")
        return self


class GemmRate(Sourced):
    """Matmul throughput at realistic large shapes (a median over shapes with m, n, k >= 4096,
    or a tuned best shape where no median is published): what a layer's GEMMs sustain."""

    tflops: float = Field(gt=0.1, le=100000)
    shapes: GemmShapes | None = None


class Gpu(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    name: GpuName
    vendor: Vendor
    form_factor: str
    arch: str = Field(description="architecture id in archs.toml: sm_90, gfx942, ...")
    family: str
    same_die_as: str | None = Field(
        default=None, description="catalog id of a part with the same silicon, whose measured "
                                  "rates transfer here scaled by peak or by power limit")
    compute_capability: str | None = None
    aliases: list[GpuName] = Field(
        default_factory=list, max_length=B.MAX_ALIASES)
    memory: Memory | None = None
    interconnect: Interconnect | None = None
    power: Power | None = None
    measured: Measured | None = None
    peak_tflops: Peaks
    mamf: dict[PeakDtype, Mamf] = Field(default_factory=dict)
    gemm: dict[PeakDtype, GemmRate] = Field(default_factory=dict)
    uncertain: list[Note] = Field(
        default_factory=list, max_length=B.MAX_NOTES,
        description="open questions about this entry's figures")

    @model_validator(mode="after")
    def _mamf_below_peak(self) -> Gpu:
        for dtype, m in self.mamf.items():
            peak = self.peak_tflops.get(dtype)
            if peak is not None and m.tflops > peak:
                raise ValueError(f"mamf.{dtype} {m.tflops} exceeds peak_tflops.{dtype} {peak}")
        for dtype, g in self.gemm.items():
            peak = self.peak_tflops.get(dtype)
            if peak is not None and g.tflops > peak:
                raise ValueError(f"gemm.{dtype} {g.tflops} exceeds peak_tflops.{dtype} {peak}")
        hbm = self.measured.hbm_tbps if self.measured else None
        if hbm is not None and self.memory is not None and hbm > self.memory.bandwidth_tbps:
            raise ValueError(f"measured.hbm_tbps {hbm} exceeds memory.bandwidth_tbps "
                             f"{self.memory.bandwidth_tbps}")
        return self

    def mamf_efficiency(self, dtype: str) -> float | None:
        m = self.mamf.get(dtype)  # type: ignore[call-overload]
        peak = self.peak_tflops.get(dtype)
        return m.tflops / peak if m and peak else None


class Arch(_Strict):
    id: str = Field(pattern=r"^[a-z0-9_.-]+$")
    vendor: Vendor
    family: str
    compute_capability: str | None = None
    formats: list[HwFormat] = Field(min_length=1, max_length=len(get_args(HwFormat)),
                                    description="formats the matrix units execute")
    sparsity: str = "unknown"
    notes: Note = ""
    source: Citations
    retrieved: Day


class Package(_Strict):
    id: str
    name: str
    kind: Literal["framework", "toolkit", "kernel", "library", "runtime"]
    import_name: str | None = None
    pip_name: str | None = None


class Support(_Strict):
    """The first version of a package that supports an architecture, and how well."""

    package: str
    arch: str
    variant: str | None = Field(default=None, description="build flavour, e.g. cuda or rocm")
    min_version: str = Field(description="'' when long-standing or unknown")
    last_version: str | None = None
    status: SupportStatus
    build: Note = ""
    error: Note = Field(default="", description="the message users hit when it is missing")
    notes: Note = ""
    source: Citations
    retrieved: Day
    confidence: Literal["verified", "secondary", "inferred"] = "verified"


class Platform(_Strict):
    """The software one vendor's accelerators run: a stack for another vendor's (a CUDA torch
    build on a TPU) does not run there at all, and this is what to install instead."""

    vendor: Vendor
    name: str = Field(min_length=3, description="e.g. PyTorch/XLA or JAX")
    torch_build: Literal["cuda", "rocm", "hpu"] | None = Field(
        default=None, description="the torch build flavour that drives it, if torch's own")
    packages: list[str] = Field(default_factory=list, max_length=B.MAX_PACKAGES,
                                description="packages that mark a stack as this platform's")
    install: Note = Field(min_length=3, description="how to install it")
    source: Citations
    retrieved: Day


class Equivalent(_Strict):
    """What does a package's work on another vendor's accelerators, or that nothing does."""

    package: str
    vendor: Vendor
    use: str = Field(default="", description="'' when nothing there does its work")
    notes: Note = ""
    source: Citations
    retrieved: Day


class Price(_Strict):
    """A published $/GPU-hour: a default until the user quotes their own."""

    gpu: str
    usd_per_hour: float = Field(gt=0.01, le=200)
    label: str = Field(min_length=3, description="what the figure is, e.g. public-cloud midpoint")
    default: bool = Field(description="the one figure used when the user quotes nothing")
    source: Citations
    retrieved: Day


T = TypeVar("T", bound=BaseModel)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True)
class Catalog:
    gpus: tuple[Gpu, ...]
    archs: Mapping[str, Arch]
    packages: Mapping[str, Package]
    support: tuple[Support, ...]
    prices: tuple[Price, ...]
    origin: Mapping[str, str] = field(default_factory=dict)
    platforms: Mapping[str, Platform] = field(default_factory=dict)  # by vendor
    equivalents: tuple[Equivalent, ...] = ()

    def gpu(self, gpu_id: str) -> Gpu:
        """Exact id, or a unique loose match; else an InputError with suggestions."""
        matches = self.match(gpu_id)
        exact = [g for g in matches if g.id == gpu_id.lower()]
        if exact:
            return exact[0]
        if len(matches) == 1:
            return matches[0]
        if matches:
            ids = ", ".join(g.id for g in matches)
            raise InputError(f"ambiguous GPU id; did you mean one of: {ids}?", value=gpu_id)
        raise InputError(f"unknown GPU id{self._suggest(gpu_id)}", value=gpu_id)

    def match(self, query: str) -> list[Gpu]:
        """Loose match: `h100` finds every H100 variant."""
        q = _norm(query)
        if not q:
            return list(self.gpus)
        for g in self.gpus:
            if g.id == query.lower():
                return [g]
        return [
            g
            for g in self.gpus
            if any(q in _norm(s) for s in (g.id, g.name, *g.aliases))
        ]

    def _suggest(self, query: str) -> str:
        import difflib  # an unknown GPU only

        ids = [g.id for g in self.gpus]
        close = difflib.get_close_matches(query.lower(), ids, n=3, cutoff=0.4)
        return f"; did you mean {', '.join(close)}?" if close else "; see `advisor catalog list`"

    def arch_of(self, gpu: Gpu) -> Arch:
        return self.archs[gpu.arch]

    def default_price(self, gpu_id: str) -> Price | None:
        for p in self.prices:
            if p.gpu == gpu_id and p.default:
                return p
        return None

    def prices_for(self, gpu_id: str) -> list[Price]:
        return [p for p in self.prices if p.gpu == gpu_id]

    def support_for(self, package: str, arch: str) -> list[Support]:
        return [s for s in self.support if s.package == package and s.arch == arch]

    def equivalent(self, package: str, vendor: str) -> Equivalent | None:
        return next((e for e in self.equivalents
                     if e.package == package and e.vendor == vendor), None)


def _validate(model: type[T], raw: Any, file: str, entry: str | None) -> T:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, file, entry) from None


_Row = TypeVar("_Row", Support, Equivalent)


def _package_row(model: type[_Row], raw: Any, file: str, entry: str,
                 packages: Mapping[str, Any]) -> _Row:
    """A software.toml row about one package, which [[package]] must declare."""
    row = _validate(model, raw, file, entry)
    if row.package not in packages:
        raise InputError("package not declared in [[package]]", file=file, entry=entry,
                         field="package", value=row.package)
    return row


def _entry_id(raw: Any, key: str = "id") -> str | None:
    if isinstance(raw, dict):
        v = raw.get(key)
        return str(v) if v is not None else None
    return None


def _table_list(doc: Mapping[str, Any], key: str, file: str) -> list[Any]:
    items = doc.get(key)
    if not isinstance(items, list) or not items:
        raise InputError(f"expected a non-empty [[{key}]] array", file=file, field=key)
    return items


def _optional_list(doc: Mapping[str, Any], key: str, file: str) -> list[Any]:
    """An array of tables a file may leave out (a pulled catalog holds none)."""
    items = doc.get(key, [])
    if not isinstance(items, list):
        raise InputError(f"expected a [[{key}]] array", file=file, field=key)
    return items


def _unique(items: Iterable[tuple[str, str]], file: str, what: str) -> None:
    seen: set[str] = set()
    for entry, key in items:
        if key in seen:
            raise InputError(f"duplicate {what}", file=file, entry=entry, field="id", value=key)
        seen.add(key)


def _leave_one_out_medians(values: list[float]) -> list[float]:
    """For each value, the median of the others: sorted once, so linear after the sort."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranked = [values[i] for i in order]
    m = len(values) - 1
    out = [0.0] * len(values)
    for rank, i in enumerate(order):
        def kth(k: int, rank: int = rank) -> float:  # k-th of the others, in sorted order
            return ranked[k if k < rank else k + 1]
        out[i] = kth(m // 2) if m % 2 else (kth(m // 2 - 1) + kth(m // 2)) / 2
    return out


# The figures a projection reads (its precisions' peaks and the HBM bandwidth). fp32, tf32
# and int8 are shown only, and consumer parts run tf32 at a fraction of their family's rate.
FAMILY_FIGURES: tuple[tuple[str, Any], ...] = (
    *((f"peak_tflops.{d}", lambda g, d=d: g.peak_tflops.get(d))
      for d in ("bf16", "fp16", "fp8", "fp6", "fp4", "nvfp4")),
    ("memory.bandwidth_tbps", lambda g: g.memory.bandwidth_tbps if g.memory else None),
)


def _check_families(gpus: list[Gpu], file: str, pulled: Collection[str] = ()) -> None:
    """Each GPU's peaks and memory bandwidth lie within MAX_FAMILY_FACTOR of its peers'
    median: the other members of its family that state the figure where there are more
    than MIN_FAMILY_MEMBERS of them, else the other GPUs of its architecture (the same
    matrix units), else, for an architecture of one, no more than MAX_FAMILY_FACTOR above
    the highest figure any other catalog GPU publishes. So a typo, or a 1e5 TFLOPS entry in
    a pulled catalog, is refused however small its family. An outlier moves the median of
    the others for every other member, so the farthest entry is the one named. The peers are
    the shipped GPUs only: a `pulled` entry (by id) is judged against published figures, never
    against another pulled entry, so two outliers in one pull cannot vouch for each other."""
    worst: tuple[float, Gpu, str, float, str] | None = None
    untrusted = frozenset(pulled)
    for figure, get in FAMILY_FIGURES:
        stated = [(g, v) for g in gpus if (v := get(g)) is not None]
        family = _peer_medians(stated, lambda g: g.family, B.MIN_FAMILY_MEMBERS, untrusted)
        arch = _peer_medians(stated, lambda g: g.arch, 0, untrusted)
        top = sorted(v for g, v in stated if g.id not in untrusted)[-2:]
        for g, v in stated:
            if g.id in family:
                median, n = family[g.id]
                factor, peers = max(v / median, median / v), (
                    f"the {g.family} family's {median:g} (the median of its other {n} members)")
            elif g.id in arch:
                median, n = arch[g.id]
                factor, peers = max(v / median, median / v), (
                    f"the {g.arch} architecture's {median:g} (the median of its other {n} "
                    "GPUs: its family has too few to judge)")
            elif len(top) == 2 and (highest := _highest_other(top, g, v, untrusted)):
                factor, peers = v / highest, (
                    f"the highest any other catalog GPU publishes ({highest:g}; its family "
                    "and architecture have too few to judge)")
            else:
                continue
            if factor > B.MAX_FAMILY_FACTOR and (worst is None or factor > worst[0]):
                worst = (factor, g, figure, v, peers)
    for found in _shown_only_above(gpus, untrusted):
        if worst is None or found[0] > worst[0]:
            worst = found
    if worst is not None:
        _, g, figure, v, peers = worst
        raise InputError(f"more than {B.MAX_FAMILY_FACTOR:g}x from {peers}", file=file,
                         entry=g.id, field=figure, value=v)


SHOWN_ONLY = ("fp32", "tf32", "int8")
"""The peaks FAMILY_FIGURES leaves out: the rest of `Peaks`' figures (a test holds them)."""


def _shown_only_above(gpus: list[Gpu], untrusted: frozenset[str]
                      ) -> list[tuple[float, Gpu, str, float, str]]:
    """The peaks no projection reads (fp32, tf32, int8: shown in tables only, and consumer
    parts run tf32 at a fraction of their family's rate, so only an upper bound applies): a
    figure more than MAX_FAMILY_FACTOR above the highest any other shipped GPU publishes."""
    out = []
    for dtype in SHOWN_ONLY:
        stated = [(g, v) for g in gpus if (v := g.peak_tflops.get(dtype)) is not None]
        top = sorted(v for g, v in stated if g.id not in untrusted)[-2:]
        for g, v in stated:
            highest = _highest_other(top, g, v, untrusted)
            if highest is not None and v > B.MAX_FAMILY_FACTOR * highest:
                out.append((v / highest, g, f"peak_tflops.{dtype}", v,
                            f"the highest any other catalog GPU publishes ({highest:g})"))
    return out


def _highest_other(top: list[float], g: Gpu, v: float, untrusted: frozenset[str]
                   ) -> float | None:
    """The highest of the (up to two) top shipped figures that is not `g`'s own."""
    others = top[:-1] if g.id not in untrusted and v == top[-1] else top
    return others[-1] if others else None


def _peer_medians(stated: list[tuple[Gpu, float]], key: Callable[[Gpu], str], fewest: int,
                  untrusted: frozenset[str] = frozenset()) -> dict[str, tuple[float, int]]:
    """By GPU id: the median of the figure over the other trusted members of its group (by
    `key`), and how many they are, for groups with more than `fewest` of them; an
    `untrusted` (pulled) member is judged against them and is never one of them."""
    groups: dict[str, list[tuple[Gpu, float]]] = {}
    for g, v in stated:
        if g.id not in untrusted:
            groups.setdefault(key(g), []).append((g, v))
    out: dict[str, tuple[float, int]] = {}
    for members in groups.values():
        if len(members) - 1 <= max(fewest - 1, 0):
            continue
        medians = _leave_one_out_medians([v for _, v in members])
        for (g, _), median in zip(members, medians, strict=True):
            out[g.id] = (median, len(members) - 1)
    for g, _ in stated:  # a pulled GPU: the median of all its group's trusted members
        members = groups.get(key(g), [])
        if g.id in untrusted and len(members) > max(fewest - 1, 0):
            import statistics  # a pulled catalog only

            out[g.id] = (statistics.median(v for _, v in members), len(members))
    return out


def _check_names(gpus: list[Gpu], file: str, pulled: Collection[str] = ()) -> None:
    """Every name a GPU answers to (its id, its name, each alias) is its alone: no other GPU
    holds it, so a pulled entry cannot take `h100` (an alias of h100-sxm) or another GPU's
    full name and have `--current H100` resolve to it. An alias is also not the model part
    of the id of a GPU of another family ("h200" of h200-sxm on a B200). The shipped GPUs
    claim their names first, then the `pulled` ones (by id): a clash is blamed on the pulled
    entry, the one that can be fixed. Within each, ids are claimed first, then names, then
    aliases: the blame goes to the less specific of two clashing names, and between two of
    a kind to the later entry. Hashed: linear in the catalog."""
    owner: dict[str, Gpu] = {}
    for group in ([g for g in gpus if g.id not in pulled], [g for g in gpus if g.id in pulled]):
        for field_ in ("id", "name", "aliases"):
            for g in group:
                for name in g.aliases if field_ == "aliases" else [getattr(g, field_)]:
                    n = _norm(name)
                    if not n:
                        raise InputError("a name needs a letter or digit", file=file,
                                         entry=g.id, field=field_, value=name)
                    other = owner.setdefault(n, g)
                    if other.id != g.id:
                        raise InputError(f"this {'alias' if field_ == 'aliases' else field_} "
                                         f"names another catalog GPU ({other.id})", file=file,
                                         entry=g.id, field=field_, value=name)
    stem = {_norm(g.id.split("-")[0]): g for g in gpus}
    for g in gpus:
        for alias in g.aliases:
            twin = stem.get(_norm(alias))
            if twin is not None and twin.family != g.family:
                raise InputError(f"this alias names another catalog GPU ({twin.id})",
                                 file=file, entry=g.id, field="aliases", value=alias)


def build_catalog(texts: Mapping[str, str], origin: Mapping[str, str] | None = None) -> Catalog:
    """Validate the four catalog files given as text, keyed by file name."""
    docs = {f: parse_toml(texts[f], (origin or {}).get(f, f)) for f in CATALOG_FILES}
    return catalog_from_docs(docs, origin)


def catalog_from_docs(docs: Mapping[str, Mapping[str, Any]],
                      origin: Mapping[str, str] | None = None,
                      pulled: Collection[str] = ()) -> Catalog:
    """Validate the four catalog files given as decoded TOML (a dict each), keyed by file
    name: a caller that keeps the decoded files need not parse the TOML again. `pulled` are
    the ids of GPUs a pulled overlay brought or replaced: a name they clash on is theirs."""
    name = dict(origin or {})

    def label(f: str) -> str:
        return name.get(f, f)

    archs = _valid_archs(docs["archs.toml"], label("archs.toml"))
    arch_map = {a.id: a for a in archs}
    gpus = _valid_gpus(docs["gpus.toml"], label("gpus.toml"), arch_map, pulled)
    sw, sw_file = docs["software.toml"], label("software.toml")
    packages = _valid_packages(sw, sw_file)
    pkg_map = {p.id: p for p in packages}
    support = _valid_support(sw, sw_file, pkg_map, arch_map)
    platforms = _valid_platforms(sw, sw_file)
    equivalents = _valid_equivalents(sw, sw_file, pkg_map)
    prices = _valid_prices(docs["prices.toml"], label("prices.toml"), {g.id for g in gpus})
    return Catalog(
        gpus=tuple(gpus),
        archs=arch_map,
        packages=pkg_map,
        support=tuple(support),
        prices=tuple(prices),
        origin={f: label(f) for f in CATALOG_FILES},
        platforms={p.vendor: p for p in platforms},
        equivalents=tuple(equivalents),
    )


def _valid_archs(doc: Mapping[str, Any], file: str) -> list[Arch]:
    """archs.toml's [[arch]] entries, each valid and with an id of its own."""
    archs = [_validate(Arch, r, file, _entry_id(r)) for r in _table_list(doc, "arch", file)]
    _unique(((a.id, a.id) for a in archs), file, "architecture id")
    return archs


def _valid_gpus(doc: Mapping[str, Any], file: str, arch_map: Mapping[str, Arch],
                pulled: Collection[str]) -> list[Gpu]:
    """gpus.toml's [[gpu]] entries: each valid, named apart from the others, in line with its
    family, on a defined architecture and, for a die twin, paired within its family."""
    gpus = [_validate(Gpu, r, file, _entry_id(r)) for r in _table_list(doc, "gpu", file)]
    _unique(((g.id, g.id) for g in gpus), file, "GPU id")
    _check_names(gpus, file, pulled)
    _check_families(gpus, file, pulled)
    by_id = {g.id: g for g in gpus}
    for g in gpus:
        if g.arch not in arch_map:
            raise InputError("architecture not defined in archs.toml",
                             file=file, entry=g.id, field="arch", value=g.arch)
        _check_die_twin(g, by_id, file)
    return gpus


def _check_die_twin(g: Gpu, by_id: Mapping[str, Gpu], file: str) -> None:
    """`same_die_as` borrows another GPU's figures, so it must name another GPU of the
    same family."""
    if g.same_die_as is None:
        return
    twin = by_id.get(g.same_die_as)
    if twin is None or twin.id == g.id or twin.family != g.family:
        raise InputError("same_die_as names no other GPU of the same family", file=file,
                         entry=g.id, field="same_die_as", value=g.same_die_as)


def _valid_packages(sw: Mapping[str, Any], file: str) -> list[Package]:
    """software.toml's [[package]] entries, each valid and with an id of its own."""
    packages = [_validate(Package, r, file, _entry_id(r))
                for r in _table_list(sw, "package", file)]
    _unique(((p.id, p.id) for p in packages), file, "package id")
    return packages


def _valid_support(sw: Mapping[str, Any], file: str, pkg_map: Mapping[str, Package],
                   arch_map: Mapping[str, Arch]) -> list[Support]:
    """software.toml's [[support]] rows, each of a declared package on a defined
    architecture."""
    support = []
    for r in _table_list(sw, "support", file):
        entry = f"{_entry_id(r, 'package')}@{_entry_id(r, 'arch')}"
        s = _package_row(Support, r, file, entry, pkg_map)
        if s.arch not in arch_map:
            raise InputError("architecture not defined in archs.toml", file=file,
                             entry=entry, field="arch", value=s.arch)
        support.append(s)
    return support


def _valid_platforms(sw: Mapping[str, Any], file: str) -> list[Platform]:
    """software.toml's optional [[platform]] entries, at most one per vendor."""
    platforms = [_validate(Platform, r, file, _entry_id(r, "vendor"))
                 for r in _optional_list(sw, "platform", file)]
    _unique(((p.vendor, p.vendor) for p in platforms), file, "platform vendor")
    return platforms


def _valid_equivalents(sw: Mapping[str, Any], file: str,
                       pkg_map: Mapping[str, Package]) -> list[Equivalent]:
    """software.toml's optional [[equivalent]] entries, each of a declared package, at most
    one per package and vendor."""
    equivalents = []
    for r in _optional_list(sw, "equivalent", file):
        entry = f"{_entry_id(r, 'package')}@{_entry_id(r, 'vendor')}"
        equivalents.append(_package_row(Equivalent, r, file, entry, pkg_map))
    _unique(((f"{e.package}@{e.vendor}", f"{e.package}@{e.vendor}") for e in equivalents),
            file, "equivalent")
    return equivalents


def _valid_prices(doc: Mapping[str, Any], file: str, gpu_ids: Collection[str]) -> list[Price]:
    """prices.toml's [[price]] entries, each for a defined GPU, with at most one default per
    GPU (the one a GPU without a quote is priced at)."""
    prices = []
    for r in _table_list(doc, "price", file):
        p = _validate(Price, r, file, _entry_id(r, "gpu"))
        if p.gpu not in gpu_ids:
            raise InputError("GPU not defined in gpus.toml", file=file,
                             entry=p.gpu, field="gpu", value=p.gpu)
        prices.append(p)
    defaults = [p.gpu for p in prices if p.default]
    for gid in set(defaults):
        if defaults.count(gid) > 1:
            raise InputError("more than one default price", file=file,
                             entry=gid, field="default", value=True)
    return prices
