"""The software gate: does this stack run on that GPU's architecture, and if not, what fixes it?

For torch, every package the workload needs, and torch's own CUDA/ROCm build,
the catalog's support rows for the target arch decide one of: ok (GA), beta,
upgrade (a newer version or another build exists), unsupported (no version
does), or unknown (no data: not a pass). A gate is blocked by any upgrade or
unsupported finding; `fixable` tells "blocked until you upgrade" apart from
"blocked, no support exists"; a gate with no support data for a package is
"unverified", never a pass.

A stack built for another vendor's accelerators (a CUDA torch build on a TPU, Trainium,
Gaudi or an AMD GPU) does not run there at all: the gate is blocked with a stack switch,
which names the platform to install (the catalog's [[platform]]) and, package by package,
what does its work there or that nothing does ([[equivalent]]).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from advisor.core.gates.dtype import canonical_precision
from advisor.core.model.catalog import Arch, Catalog, Gpu, Platform, Support
from advisor.core.model.stack import (
    ATTENTION_KERNELS,
    Stack,
    cuda_of_tag,
    is_prerelease,
    not_past,
    parse_version,
    pick_torch_build,
    release_as_written,
    rocm_of_tag,
    same_release,
    try_parse_version,
    version_at_least,
)

if TYPE_CHECKING:
    from packaging.version import Version

FindingStatus = Literal["ok", "beta", "upgrade", "switch", "unsupported", "unknown"]
_SEVERITY: dict[str, int] = {"ok": 0, "beta": 1, "unknown": 2, "upgrade": 3, "switch": 4,
                             "unsupported": 5}
GateStatus = Literal["ok", "beta", "unverified", "blocked"]

# Which torch build flavour drives each vendor's GPUs, and the runtime whose version matters.
_TARGET_FLAVOUR: dict[str, str] = {"NVIDIA": "cuda", "AMD": "rocm", "Intel": "hpu"}
_TOOLKIT = {"cuda": "cuda-toolkit", "rocm": "rocm"}
_BUILD_KIND = {
    "cpu": "a CPU-only",
    "cuda": "a CUDA",
    "rocm": "a ROCm",
    "xpu": "an XPU",
    "hpu": "an Intel Gaudi (hpu)",
}
_BUILD_NAME = {"cpu": "CPU-only", "cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU",
               "hpu": "Intel Gaudi (hpu)"}
_FLAVOURS = ("cuda", "rocm", "cpu", "xpu", "hpu")

WHEEL_INDEX = "https://download.pytorch.org/whl/"

# torch's own words when its wheel lacks the GPU's kernels (torch/cuda/__init__.py, and the
# CUDA runtime): reference strings #1 and #2.
NOT_COMPATIBLE = (
    "{name} with CUDA capability {sm} is not compatible with the current PyTorch installation."
)
NO_KERNEL_IMAGE = "CUDA error: no kernel image is available for execution on the device"
# CUDA 13 userspace needs an r580+ driver (CUDA 13.0 features page).
CUDA13_DRIVER = "CUDA 13 builds need an R580+ driver"


class SoftwareFinding(BaseModel):
    """One package on one arch: the verdict, the exact fix, and where the facts come from."""

    model_config = ConfigDict(frozen=True)

    package: str
    installed: str | None
    required: str | None
    status: FindingStatus
    action: str
    message: str
    source: list[str]
    alternatives: list[str] = []


class StackSwitch(BaseModel):
    """A stack built for another vendor's accelerators, and what moving to this one takes."""

    model_config = ConfigDict(frozen=True)

    vendor: str  # the target's
    stack_vendor: str | None  # whose accelerators the stack is built for (None: not said)
    platform: str  # what runs there, e.g. "PyTorch/XLA (torch-xla) or JAX"
    install: str
    rebuilt: list[str] = []  # packages with their own build there, to reinstall
    replaced: dict[str, str] = {}  # package -> what does its work there
    missing: list[str] = []  # packages nothing there replaces
    unknown: list[str] = []  # packages with no data there (not a pass)


class SoftwareGate(BaseModel):
    """The stack against one GPU.

    `status` is "unverified" when some package has no support data (see
    `unverified`) and nothing blocks: it may run, but nobody vouches for it, so it is
    not a pass. `fixable` is False once any needed package has no supporting version at
    all, or the stack is another vendor's (`switch`).
    """

    model_config = ConfigDict(frozen=True)

    gpu: str
    arch: str
    status: GateStatus
    fixable: bool
    findings: list[SoftwareFinding]
    summary: str
    switch: StackSwitch | None = None

    @property
    def unverified(self) -> list[str]:
        return [f.package for f in self.findings if f.status == "unknown"]

    @property
    def actions(self) -> list[str]:
        return [f.action for f in self.findings if f.action]

    @property
    def remedy(self) -> str | None:
        """What unblocks this GPU when that is only an upgrade, or a check of packages with
        no support data; None when it runs as it is or needs more (another stack, a
        package with no supporting version)."""
        if self.status == "blocked" and self.fixable:
            return "; ".join(self.actions) or None
        if self.status == "unverified":
            return (f"check {', '.join(self.unverified)} on {self.gpu} (a probe run there), "
                    "or declare the stack it would run")
        return None


@dataclass(frozen=True)
class _Outcome:
    """How one support row judges the installed version."""

    kind: Literal["ga", "beta", "upgrade", "unsupported"]
    row: Support
    floor: str | None  # the version that would satisfy the row, for upgrades


def _variant_kind(variant: str | None) -> str:
    if variant is None:
        return "base"
    v = variant.strip().lower()
    if v in _FLAVOURS:
        return v
    if cuda_of_tag(v):
        return "cuda"
    if rocm_of_tag(v):
        return "rocm"
    return "feature"


def _words(variant: str | None) -> list[str]:
    return re.split(r"[^a-z0-9_]+", (variant or "").lower())


def applicable_rows(
    rows: Iterable[Support], flavour: str | None, precision: str | None
) -> list[Support]:
    """The rows that speak for this target.

    A variant naming a build flavour (cuda, rocm, cu128, rocm6.3) applies only to
    the target's flavour. Any other variant names a feature (fp8, mxfp8, nvfp4):
    those rows win when they match the precision, and otherwise stand in for the
    package only when it has no general rows.
    """
    base, features = [], []
    for r in rows:
        kind = _variant_kind(r.variant)
        if kind == "feature":
            features.append(r)
        elif kind == "base" or kind == flavour:
            base.append(r)
    if precision:
        hits = [r for r in features if precision in _words(r.variant)]
        if hits:
            return hits
    return base or features


def _judge(row: Support, installed: str | None) -> _Outcome:
    floor = row.min_version if try_parse_version(row.min_version) else None
    last = row.last_version if row.last_version and try_parse_version(row.last_version) else None
    if row.status == "unsupported":
        if last and installed and not_past(installed, last):
            return _Outcome("ga", row, None)
        return _Outcome("unsupported", row, None)
    if installed is None:
        return _Outcome("upgrade", row, floor)
    if last and not not_past(installed, last):
        return _Outcome("unsupported", row, None)
    if floor and not version_at_least(installed, floor):
        return _Outcome("upgrade", row, floor)
    return _Outcome(row.status, row, None)


def _floor_key(o: _Outcome) -> tuple[int, Version | None]:
    return (0, parse_version(o.floor)) if o.floor else (1, None)


def _install_action(
    catalog: Catalog, package: str, installed: str | None, floor: str | None
) -> str:
    """ "upgrade flash-attn-4 → ≥4.0.0b5: pip install 'flash-attn-4>=4.0.0b5'"; non-pip
    packages (the CUDA toolkit, ROCm) get the words without a command."""
    verb = "upgrade" if installed else "install"
    target = f" → ≥{floor}" if floor else ""
    pkg = catalog.packages.get(package)
    if pkg is not None and pkg.pip_name is None:
        return f"{verb} {pkg.name}{target}"
    name = pkg.pip_name if pkg is not None and pkg.pip_name else package
    command = f"pip install '{name}>={floor}'" if floor else f"pip install {name}"
    return f"{verb} {package}{target}: {command}"


def _is_attention(package: str) -> bool:
    return package in ATTENTION_KERNELS or package.startswith("torch-sdpa")


def _alternatives(catalog: Catalog, package: str, arch: Arch, flavour: str | None) -> list[str]:
    """Other attention kernels with support on this arch: FA3 on sm_100 -> FA4, cuDNN SDPA."""
    if not _is_attention(package):
        return []
    out = []
    for pid in catalog.packages:
        if pid == package or not _is_attention(pid):
            continue
        rows = applicable_rows(catalog.support_for(pid, arch.id), flavour, None)
        usable = [r for r in rows if r.status != "unsupported"]
        if usable:
            best = next((r for r in usable if r.status == "ga"), usable[0])
            since = f" ≥{best.min_version}" if try_parse_version(best.min_version) else ""
            out.append(f"{pid}{since} ({best.status})")
    return out


def _subject(package: str, row: Support) -> str:
    """ "transformer-engine mxfp8" when a feature row speaks, else the package."""
    return f"{package} {row.variant}" if _variant_kind(row.variant) == "feature" else package


def _quote(text: str) -> str:
    return f"'{text}'" if text else ""


def _gpu_error(row: Support, gpu: Gpu) -> str:
    """The row's failure text as this GPU would print it, quoted."""
    return _quote(row.error.replace("<GPU name>", gpu.name))


def _package_finding(
    package: str,
    installed: str | None,
    rows: list[Support],
    gpu: Gpu,
    arch: Arch,
    catalog: Catalog,
    flavour: str | None,
) -> SoftwareFinding:
    """The verdict for one package from its applicable rows: the best reachable outcome wins."""
    if not rows:
        return _unknown(package, installed, f"no support data for {package} on {arch.id}")
    outcomes = [_judge(r, installed) for r in rows]
    by_kind = {k: [o for o in outcomes if o.kind == k] for k in ("ga", "beta", "upgrade")}
    if by_kind["ga"]:
        return _ga_finding(package, installed, by_kind["ga"][0], arch)
    ga_from = _ga_floor(by_kind["upgrade"])
    if by_kind["beta"]:
        return _beta_finding(package, installed, by_kind["beta"][0], arch, ga_from)
    if by_kind["upgrade"]:
        nearest = sorted(by_kind["upgrade"], key=_floor_key)[0]
        return _upgrade_finding(package, installed, nearest, gpu, arch, catalog, ga_from)
    return _unsupported_finding(package, installed, outcomes, gpu, arch, catalog, flavour)


def _ga_floor(upgrades: list[_Outcome]) -> str | None:
    """The lowest version that would make the package GA here, for a beta or an upgrade to
    mention; None when no upgrade reaches GA."""
    ga_later = sorted((o for o in upgrades if o.row.status == "ga"), key=_floor_key)
    return ga_later[0].floor if ga_later else None


def _ga_finding(package: str, installed: str | None, o: _Outcome, arch: Arch) -> SoftwareFinding:
    """The installed version is GA on this arch: nothing to do."""
    return _runs(package, installed, o, "ok",
                 f"{package} {installed or 'not installed'} supports {arch.id}")


def _runs(package: str, installed: str | None, o: _Outcome, status: Literal["ok", "beta"],
          message: str) -> SoftwareFinding:
    """A finding where the installed version runs, so there is nothing to do."""
    return SoftwareFinding(package=package, installed=installed,
                           required=o.row.min_version or None, status=status, action="",
                           message=message, source=list(o.row.source))


def _beta_finding(
    package: str, installed: str | None, o: _Outcome, arch: Arch, ga_from: str | None
) -> SoftwareFinding:
    """The installed version runs here as beta: not a block, but said, with the GA version
    when one exists."""
    notes = f" ({o.row.notes})" if o.row.notes else ""
    ga_note = f"; GA from {ga_from}" if ga_from else ""
    shown = installed or "not installed"
    return _runs(package, installed, o, "beta",
                 f"{_subject(package, o.row)} {shown} on {arch.id} is beta{ga_note}{notes}")


def _upgrade_finding(
    package: str,
    installed: str | None,
    o: _Outcome,
    gpu: Gpu,
    arch: Arch,
    catalog: Catalog,
    ga_from: str | None,
) -> SoftwareFinding:
    """The nearest version that supports this arch is newer than the installed one (or the
    package is missing): the upgrade, and how older versions fail."""
    message = _upgrade_message(package, installed, o, arch, ga_from)
    if o.row.error and package != "torch":  # torch's errors come with its build check
        message += f"; older versions fail with {_gpu_error(o.row, gpu)}"
    return SoftwareFinding(
        package=package,
        installed=installed,
        required=o.floor,
        status="upgrade",
        action=_install_action(catalog, package, installed, o.floor),
        message=message,
        source=list(o.row.source),
    )


def _upgrade_message(
    package: str, installed: str | None, o: _Outcome, arch: Arch, ga_from: str | None
) -> str:
    """What is missing or too old, from which version the arch is supported, and at what tier."""
    tier = "GA" if o.row.status == "ga" else f"beta; GA from {ga_from}" if ga_from else "beta"
    if installed is None:
        message = f"{package} is needed but not installed; {arch.id} support is {tier}"
        return message + (f" from {o.floor}" if o.floor else "")
    message = f"{_subject(package, o.row)} {installed} is below {o.floor}, the first "
    message += f"version that supports {arch.id} ({tier})"
    if o.floor and _prerelease_of(installed, o.floor):
        message += f"; {installed} is a pre-release of {o.floor} (a nightly or NGC build)"
    return message


def _prerelease_of(installed: str, floor: str) -> bool:
    """Whether the installed version is a nightly or NGC build of the release it is below, so
    "below" is not read as "an old release"."""
    return is_prerelease(installed) and not is_prerelease(floor) and same_release(installed, floor)


def _unsupported_finding(
    package: str,
    installed: str | None,
    outcomes: list[_Outcome],
    gpu: Gpu,
    arch: Arch,
    catalog: Catalog,
    flavour: str | None,
) -> SoftwareFinding:
    """No version supports this arch, or the installed one is past the last that did: pin
    it back, use another kernel, or say that nothing runs."""
    past = [o.row for o in outcomes if o.row.last_version and try_parse_version(o.row.last_version)]
    row = past[0] if past and installed else outcomes[0].row
    subject = _subject(package, row)
    dropped = bool(past) and installed is not None
    if dropped:
        message = f"{subject} dropped {arch.id} after {row.last_version}"
    else:
        message = f"{subject} does not support {arch.id}"
    if row.error:
        message += f": {_gpu_error(row, gpu)}"
    if row.notes:
        message += f" ({row.notes})"
    alternatives = _alternatives(catalog, package, arch, flavour)
    if dropped:
        action = f"pin {package} to ≤{row.last_version}"
    elif alternatives:
        action = f"replace {package}: use " + " or ".join(alternatives)
    else:
        action = f"no {subject} version supports {arch.id}"
    return SoftwareFinding(
        package=package,
        installed=installed,
        required=f"≤{row.last_version}" if dropped else None,
        status="upgrade" if dropped else "unsupported",
        action=action,
        message=message,
        source=[s for o in outcomes for s in o.row.source],
        alternatives=alternatives,
    )


@dataclass(frozen=True)
class _BuildProblem:
    message: str
    need: str | None  # CUDA or ROCm version the build must have
    source: tuple[str, ...]
    ceiling: str | None = None  # the runtime is too new: the last one that targets the arch


def _row_builds(rows: Iterable[Support], flavour: str) -> list[str]:
    if flavour not in _TOOLKIT:
        return []
    pattern = r"cu\d{2,4}" if flavour == "cuda" else r"rocm\d+(?:\.\d+)*"
    out = []
    for r in rows:
        if r.status == "unsupported":
            continue
        for tag in re.findall(pattern, r.build.lower()):
            runtime = cuda_of_tag(tag) if flavour == "cuda" else rocm_of_tag(tag)
            if runtime:
                out.append(runtime)
    return out


def _build_need(
    torch_rows: list[Support], toolkit_rows: list[Support], flavour: str
) -> tuple[str | None, tuple[str, ...]]:
    """The CUDA/ROCm a torch build needs for this arch: the torch rows' builds, else the
    toolkit's first version (nvcc targets can be newer than what the wheels need:
    sm_103 runs the wheels' sm_100 cubins)."""
    builds = _row_builds(torch_rows, flavour)
    if builds:
        used = tuple(s for r in torch_rows if r.build for s in r.source)
        return min(builds, key=parse_version), used
    floors = [
        r for r in toolkit_rows if r.status != "unsupported" and try_parse_version(r.min_version)
    ]
    if floors:
        r = min(floors, key=lambda r: parse_version(r.min_version))
        return r.min_version, tuple(r.source)
    return None, ()


def _build_problem(
    stack: Stack,
    gpu: Gpu,
    arch: Arch,
    catalog: Catalog,
    torch_rows: list[Support],
    target: str,
) -> _BuildProblem | None:
    """Whether torch's build can drive the target at all, and has kernels for its arch."""
    toolkit_rows = catalog.support_for(_TOOLKIT[target], arch.id) if target in _TOOLKIT else []
    need, src = _build_need(torch_rows, toolkit_rows, target)
    desc = stack.describe_torch()
    have = stack.flavour
    if have is None:
        return None
    if have != target:
        return _BuildProblem(
            f"torch {desc} is {_BUILD_KIND[have]} build: it cannot drive {gpu.name} "
            f"({arch.vendor})",
            need,
            src,
        )
    runtime = stack.cuda if target == "cuda" else stack.hip if target == "rocm" else None
    if runtime is None:
        return None
    name = _runtime_name(target)
    if need and not version_at_least(runtime, need):
        message = f"torch {desc} has no {arch.id} kernels: it needs a {name} {need}+ build"
        if target == "cuda":
            warning = NOT_COMPATIBLE.format(name=gpu.name, sm=arch.id)
            message += f"; torch warns '{warning}' and kernels fail with '{NO_KERNEL_IMAGE}'"
        return _BuildProblem(message, need, src)
    for r in toolkit_rows:
        last = r.last_version
        if last and try_parse_version(last) and not not_past(runtime, last):
            return _BuildProblem(
                f"{name} {runtime} dropped {arch.id} (last: {last}): "
                f"torch {desc} has no kernels for it",
                None,
                tuple(r.source),
                ceiling=last,
            )
    return None


def _runtime_name(flavour: str) -> str:
    return {"cuda": "CUDA", "rocm": "ROCm"}.get(flavour, flavour)


def _torch_action(stack: Stack, target: str, floor: str | None, need: str | None) -> str:
    """e.g. "upgrade torch 2.6.0+cu126 → ≥2.7 with a CUDA 12.8 build (cu128): pip install ..."."""
    installed = stack.torch
    if target not in _TOOLKIT:  # Gaudi's torch comes with Intel's software stack, not PyPI
        return f"replace torch {stack.describe_torch()} with the Intel Gaudi software stack's torch"
    start = floor or (".".join(map(str, release_as_written(installed))) if installed else "2.6")
    choice = pick_torch_build(start, target, need)
    verb = "upgrade" if floor or installed is None else "reinstall"
    desc = stack.describe_torch() if installed else "(not installed)"
    if choice is None:
        wanted = f"{_runtime_name(target)} {need}+" if need else _runtime_name(target)
        return f"{verb} torch {desc} → ≥{start} with a {wanted} build"
    minor, tag = choice
    spec = start if release_as_written(start)[:2] == release_as_written(minor)[:2] else minor
    runtime = cuda_of_tag(tag) or rocm_of_tag(tag) or ""
    action = (
        f"{verb} torch {desc} → ≥{spec} with a {_runtime_name(target)} {runtime} build "
        f"({tag}): pip install 'torch>={spec}' --index-url {WHEEL_INDEX}{tag}"
    )
    if target == "cuda" and version_at_least(runtime, "13"):
        action += f" ({CUDA13_DRIVER})"
    return action


def _torch_finding(
    stack: Stack, gpu: Gpu, arch: Arch, catalog: Catalog, precision: str | None
) -> SoftwareFinding:
    """torch's version verdict merged with its build's: one finding, one fix."""
    target = _TARGET_FLAVOUR.get(arch.vendor)
    rows = applicable_rows(catalog.support_for("torch", arch.id), target, precision)
    base = _package_finding("torch", stack.torch, rows, gpu, arch, catalog, target)
    if target is None:
        return base
    problem = _build_problem(stack, gpu, arch, catalog, rows, target)
    if problem is None:
        if stack.flavour is None and base.status in ("ok", "beta") and target in _TOOLKIT:
            need, _ = _build_need(rows, catalog.support_for(_TOOLKIT[target], arch.id), target)
            if need:
                name = _runtime_name(target)
                note = f"; build not stated: {arch.id} needs a {name} {need}+ build"
                return base.model_copy(update={"message": base.message + note})
        if base.status == "upgrade" and base.required:
            need, _ = _build_need(rows, [], target)
            action = _torch_action(stack, target, base.required, need)
            return base.model_copy(update={"action": action})
        return base
    status: FindingStatus = "unsupported" if base.status == "unsupported" else "upgrade"
    floor = base.required if base.status == "upgrade" else None
    if status == "unsupported":
        action = base.action
    elif problem.ceiling:
        older = f"{_runtime_name(target)} ≤{problem.ceiling}"
        action = f"reinstall torch {stack.describe_torch()} with a {older} build"
    else:
        action = _torch_action(stack, target, floor, problem.need)
    message = problem.message
    if base.status not in ("ok", "beta"):
        message = f"{base.message}; {problem.message}"
    return base.model_copy(
        update={
            "status": status,
            "action": action,
            "message": message,
            "source": list(dict.fromkeys([*base.source, *problem.source])),
        }
    )


def _unknown_package(package: str, installed: str | None, catalog: Catalog) -> SoftwareFinding:
    import difflib  # a package the catalog does not know only

    close = difflib.get_close_matches(package, list(catalog.packages), n=2, cutoff=0.6)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return _unknown(package, installed, f"{package} is not in the catalog{hint}: no support data")


def _unknown(package: str, installed: str | None, message: str) -> SoftwareFinding:
    """No data is not a pass: the finding says so, and the gate treats it as unverified."""
    return SoftwareFinding(package=package, installed=installed, required=None,
                           status="unknown", action="", message=message, source=[])


def _summary(
    gpu: Gpu, arch: Arch, status: str, fixable: bool, findings: list[SoftwareFinding]
) -> str:
    where = f"{gpu.name} ({arch.id})"

    def names(*kinds: str) -> str:
        return ", ".join(f.package for f in findings if f.status in kinds)

    # a blocked gate's summary is what a verdict says after "blocked: ", so it does not
    # say "blocked" again
    if status == "blocked" and fixable:
        return f"needs newer {names('upgrade')} on {where}"
    if status == "blocked":
        text = f"no supporting version of {names('unsupported')} on {where}"
        alts = [a for f in findings for a in f.alternatives]
        return text + (f"; alternatives: {', '.join(alts)}" if alts else "")
    if status == "unverified":
        text = f"not verified on {where}: no support data for {names('unknown')}"
        return text + (f"; beta support for {names('beta')}" if names("beta") else "")
    if status == "beta":
        return f"runs on {where} with beta support for {names('beta')}"
    shown = ", ".join(f"{f.package} {f.installed}" for f in findings)
    return f"supported on {where}: {shown}"


def stack_vendor(stack: Stack, catalog: Catalog) -> str | None:
    """Whose accelerators a stack is built for: its torch build's (cu -> NVIDIA, rocm -> AMD,
    hpu -> Intel), else the platform whose packages it holds (torch-xla or JAX -> Google,
    torch-neuronx -> AWS); None when it does not say."""
    platforms = list(catalog.platforms.values())
    for p in platforms:
        if p.torch_build is not None and stack.flavour == p.torch_build:
            return p.vendor
    for p in platforms:
        if any(name in stack.packages for name in p.packages):
            return p.vendor
    return None


def _foreign(stack: Stack, vendor: str | None, platform: Platform) -> bool:
    """Whether the stack cannot run on the platform's accelerators at all: it is another
    vendor's, or the platform runs only through packages the stack does not have."""
    if vendor is not None:
        return vendor != platform.vendor
    return platform.torch_build is None and bool(platform.packages)


def _counterpart(package: str, installed: str | None, arch: Arch, catalog: Catalog,
                 flavour: str | None, precision: str | None) -> SoftwareFinding:
    """One of a foreign stack's packages on this vendor: its own build here, what does its
    work here, that nothing does, or no data (not a pass)."""
    rows = applicable_rows(catalog.support_for(package, arch.id), flavour, precision)
    usable = [r for r in rows if r.status != "unsupported"]
    where = f"{arch.vendor} {arch.family}"
    if usable:
        r = next((x for x in usable if x.status == "ga"), usable[0])
        since = f" ≥{r.min_version}" if try_parse_version(r.min_version) else ""
        return SoftwareFinding(
            package=package, installed=installed, required=r.min_version or None,
            status="switch", action=f"install {package}{since}'s "
            f"{_runtime_name(flavour) if flavour else arch.vendor} build"
            + (f" ({r.build})" if r.build else ""),
            message=f"{package} has a build for {arch.id} ({r.status}); yours is another "
                    "vendor's", source=list(r.source))
    eq = catalog.equivalent(package, arch.vendor)
    if eq is not None and eq.use:
        return SoftwareFinding(
            package=package, installed=installed, required=None, status="switch",
            action=f"replace {package} with {eq.use}",
            message=f"{package} does not run on {where}: {eq.notes}".rstrip(": "),
            source=list(eq.source), alternatives=[eq.use])
    if eq is not None or rows:
        why = eq.notes if eq is not None else rows[0].notes or rows[0].error
        return SoftwareFinding(
            package=package, installed=installed, required=None, status="unsupported",
            action=f"no equivalent of {package} on {where}",
            message=f"{package} has no equivalent on {where}" + (f": {why}" if why else ""),
            source=list(eq.source if eq is not None else rows[0].source))
    return _unknown(package, installed, f"no support data for {package} on {arch.id}")


def _switch_gate(stack: Stack, gpu: Gpu, arch: Arch, catalog: Catalog, platform: Platform,
                 vendor: str | None, precision: str | None) -> SoftwareGate:
    """A stack built for another vendor's accelerators against this one: what to install
    and, package by package, what carries over."""
    flavour = _TARGET_FLAVOUR.get(arch.vendor)
    kind = (f"stack ({_BUILD_NAME[stack.flavour]} torch build)" if stack.flavour
            else f"{vendor} stack" if vendor else "stack")
    if flavour in _TOOLKIT and stack.torch is not None:  # torch's own build: the exact wheel
        runtime = _torch_finding(stack, gpu, arch, catalog, precision)
        runtime = runtime.model_copy(update={"status": "switch"})
    else:
        runtime = SoftwareFinding(
            package="torch" if stack.torch is not None else next(iter(stack.packages), "torch"),
            installed=stack.describe_torch() if stack.torch else None, required=None,
            status="switch", action=f"install {platform.name}: {platform.install}",
            message=f"your {kind} cannot drive {gpu.name} ({arch.vendor}): it runs "
                    f"{platform.name}", source=list(platform.source))
    own = set(platform.packages) | {"torch"}
    findings = [runtime] + [
        _counterpart(p, stack.version_of(p), arch, catalog, flavour, precision)
        for p in stack.needs if p not in own]
    switch = StackSwitch(
        vendor=arch.vendor, stack_vendor=vendor, platform=platform.name,
        install=platform.install,
        rebuilt=[f.package for f in findings[1:] if f.status == "switch" and not f.alternatives],
        replaced={f.package: f.alternatives[0] for f in findings[1:]
                  if f.status == "switch" and f.alternatives},
        missing=[f.package for f in findings[1:] if f.status == "unsupported"],
        unknown=[f.package for f in findings[1:] if f.status == "unknown"])
    text = f"your {kind} does not run on {arch.vendor} accelerators such as {gpu.name} " \
           f"({arch.id}); install {platform.name}"
    if switch.missing:
        text += f"; no equivalent there for {', '.join(switch.missing)}"
    if switch.rebuilt:
        text += f"; reinstall {', '.join(switch.rebuilt)} built for it"
    if switch.replaced:
        text += "; " + "; ".join(f"{p} -> {use}" for p, use in switch.replaced.items())
    if switch.unknown:
        text += f"; no support data for {', '.join(switch.unknown)}"
    return SoftwareGate(gpu=gpu.id, arch=arch.id, status="blocked", fixable=False,
                        findings=findings, summary=text, switch=switch)


def check_software(
    stack: Stack, gpu: Gpu, catalog: Catalog, *, precision: str | None = None
) -> SoftwareGate:
    """Judge torch (always), its build, and every needed package against the GPU's arch.

    `precision` selects feature-specific rows (Transformer Engine's mxfp8 on
    sm_120 is refused while its fp8 is GA).
    """
    arch = catalog.arch_of(gpu)
    target = _TARGET_FLAVOUR.get(arch.vendor)
    p = canonical_precision(precision) if precision else None
    platform = catalog.platforms.get(arch.vendor)
    vendor = stack_vendor(stack, catalog)
    if platform is not None and _foreign(stack, vendor, platform):
        return _switch_gate(stack, gpu, arch, catalog, platform, vendor, p)
    findings = [_torch_finding(stack, gpu, arch, catalog, p)] if (
        stack.torch is not None or "torch" in stack.needs) else []
    for package in stack.needs:
        if package == "torch":
            continue
        installed = stack.version_of(package)
        if package not in catalog.packages:
            findings.append(_unknown_package(package, installed, catalog))
            continue
        rows = applicable_rows(catalog.support_for(package, arch.id), target, p)
        findings.append(_package_finding(package, installed, rows, gpu, arch, catalog, target))
    worst = max((_SEVERITY[f.status] for f in findings), default=0)
    status: GateStatus = (
        "blocked" if worst >= _SEVERITY["upgrade"]
        else "unverified" if any(f.status == "unknown" for f in findings)
        else "beta" if worst > 0 else "ok"
    )
    fixable = all(f.status != "unsupported" for f in findings)
    return SoftwareGate(
        gpu=gpu.id,
        arch=arch.id,
        status=status,
        fixable=fixable,
        findings=findings,
        summary=_summary(gpu, arch, status, fixable, findings),
    )


def gate_all(
    stack: Stack, gpus: Iterable[Gpu], catalog: Catalog, *, precision: str | None = None
) -> dict[str, SoftwareGate]:
    """Every GPU's gate, keyed by GPU id, for the TUI's overview table."""
    return {g.id: check_software(stack, g, catalog, precision=precision) for g in gpus}
