"""The wizard's one piece of state: the answers being built, step by step.

Every step screen reads this object and changes it through its methods; nothing else
holds answers. It records only what the user gave: a field left alone is not in `given`, so the
engine applies its own default and the decision lists it as a default, exactly as
`advisor decide` does for an answers file that leaves it out. `to_answers` turns it
into the engine's `Answers`; the app hands those to `advisor.core.run`.

No Textual here, so it can be unit-tested without an app.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from advisor.tui.hardware import Hardware
from advisor.tui.numbers import Price
from advisor.tui.runner import ProbeRunner

if TYPE_CHECKING:
    from advisor.core import (
        Answers,
        Catalog,
        ConfigOptions,
        PipelineSpec,
        ProbeRecord,
        Stack,
    )

STEPS: tuple[tuple[str, str], ...] = (
    ("welcome", "Welcome"),
    ("workload", "Workload"),
    ("targets", "Targets and prices"),
    ("dtype", "Dtype gate"),
    ("software", "Software gate"),
    ("probes", "Probes"),
    ("performance", "Performance"),
    ("configs", "Configurations"),
    ("verdict", "Verdict"),
)
STEP_IDS = tuple(s for s, _ in STEPS)

ProbeChoice = Literal["quick", "full", "none", "import", "report"]
"""quick/full: measure this box; none: no run here (imported records and the catalog);
import: a record file made elsewhere; report: the records a resumed report used."""

EXAMPLE_WORKLOAD: dict[str, Any] = {"model": "llama-3.1-8b", "seq_lens": (4096, 8192)}
"""Where a new wizard starts: the engine needs a model and sequence lengths (it has no
default for them), so the form begins with an example, marked as one until edited."""


@dataclass(frozen=True)
class WizardState:
    """Frozen to everyone but itself: a field changes only through the methods below (each
    one edit a step makes), and each field's container is read-only (a tuple, a frozenset,
    a read-only mapping), so the answers have one owner and no step changes them behind
    the others' backs. The one object is shared by the app and every step, so each sees
    an edit at once."""

    current: str | None = None
    """Catalog id of the GPU the workload runs on today."""
    current_count: int | None = None
    """Its own GPU count when the answers gave one (`current = "id@N"`, kept from a resumed
    report); None: the workload's `gpus`, which the Workload step sets (and typing it
    there drops this)."""
    given: Mapping[str, Any] = field(default_factory=lambda: dict(EXAMPLE_WORKLOAD))
    """Workload fields the user gave, keyed as `Workload` names them (`model` is a preset
    name or a dict of dimensions). A field absent here takes the engine's default."""
    examples: frozenset[str] = frozenset(EXAMPLE_WORKLOAD)
    """Fields in `given` that still hold the wizard's starting example, not a typed value."""
    targets: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    """A target's own GPU count, when it differs from the workload's (the `id@N` form)."""
    layouts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per GPU, what runs differently there (`layouts.<id>` in answers): its own number
    format, KV format, TP/PP/EP...; a field left out is the workload's."""
    measured: Mapping[str, Any] = field(default_factory=dict)
    """What the user measured on the current GPU today (`[measured]`), as MeasuredRun
    names its fields; empty: no anchor."""
    quotes: Mapping[str, Price] = field(default_factory=dict)
    """Prices the user typed: ("usd", $/GPU-hour) or ("ratio", x the current GPU's price)."""
    electricity_usd_per_kwh: float | None = None
    power_cap_kw: float | None = None
    time_premium: float | None = None
    stack: Stack | None = None
    """The stack the user declared; None: this box's when it has a GPU, else no stack."""
    stacks: Mapping[str, Stack] = field(default_factory=dict)
    """A target's own stack (`stacks.<id>`: PyTorch/XLA on a TPU), set on Targets; a GPU
    without one is checked against the job's stack."""
    box_stack: bool = True
    """Whether, with none declared, the job runs on this box's stack (a resumed report
    without a stack keeps having none)."""
    probe_choice: ProbeChoice | None = None
    probe_records: Mapping[str, ProbeRecord] = field(default_factory=dict)
    """Records the wizard brings itself, by catalog id: its own run, an imported file, or a
    resumed report's. They win over the store's record for the same GPU."""
    use_stored: bool = True
    """Use the records filed with `advisor probe import`, as `advisor decide` does."""
    configs: ConfigOptions | None = None
    sweep: bool = True
    """Whether the answers carry [configs] (a GPU-count sweep). The wizard's flow has a
    Configurations step, so a new wizard does; a resumed report keeps what it had."""
    pipeline: PipelineSpec | None = None
    invalid: Mapping[str, str] = field(default_factory=dict)
    """Fields that hold text the wizard refused ("4.5" GPUs), by where they are, with the
    message: no answers are made while one does, so a refused entry never leaves the
    previous value in use unseen."""
    loaded: Answers | None = None
    """A resumed report's answers: what the wizard has no field for (per-GPU power limits,
    the basis) is kept from them."""
    reached: int = 0

    def __post_init__(self) -> None:
        self._set(**{f.name: getattr(self, f.name) for f in fields(self)})

    def _set(self, **values: Any) -> None:
        """The one place a field is written: containers are stored read-only."""
        for name, value in values.items():
            if name == "layouts":
                value = {g: MappingProxyType(dict(v)) for g, v in value.items()}
            if isinstance(value, Mapping):
                value = MappingProxyType(dict(value))
            elif isinstance(value, list):
                value = tuple(value)
            elif isinstance(value, set):
                value = frozenset(value)
            object.__setattr__(self, name, value)

    def _put(self, name: str, key: str, value: Any) -> None:
        """One entry of a mapping field set, or removed (None)."""
        entries = dict(getattr(self, name))
        if value is None:
            entries.pop(key, None)
        else:
            entries[key] = value
        self._set(**{name: entries})

    # -- Welcome and Workload ---------------------------------------------------------

    def set_current(self, gpu: str | None) -> None:
        self._set(current=gpu)

    def give(self, key: str, value: Any) -> None:
        """The user set a workload field (None: cleared, the default applies again)."""
        self._set(examples=self.examples - {key})
        if key == "gpus":  # the GPU count typed on Workload is the current side's
            self._set(current_count=None)
        self._put("given", key, value)

    def keep_example(self, key: str | None = None) -> None:
        """The starting example of `key` (None: of every field) is the user's answer now."""
        self._set(examples=frozenset() if key is None else self.examples - {key})

    def set_measured(self, key: str, value: Any) -> bool:
        """One figure of the user's measured run (None: not measured); whether it changed."""
        changed = self.measured.get(key) != value
        self._put("measured", key, value)
        return changed

    def set_invalid(self, where: str, message: str | None) -> None:
        """A field at `where` holds text the wizard refuses (`message`), or no longer does."""
        self._put("invalid", where, message)

    # -- Targets ----------------------------------------------------------------------

    def toggle_target(self, gpu: str) -> None:
        """Add a target, or remove it with its own GPU count."""
        if gpu in self.targets:
            self._set(targets=tuple(t for t in self.targets if t != gpu))
            self._put("counts", gpu, None)
        else:
            self._set(targets=(*self.targets, gpu))

    def set_count(self, gpu: str, count: int | None) -> None:
        self._put("counts", gpu, count)

    def set_quote(self, gpu: str, price: Price | None) -> None:
        self._put("quotes", gpu, price)

    def set_own(self, gpu: str, layout: Mapping[str, Any], stack: Stack | None) -> None:
        """What runs differently on one GPU: its layout fields and its own stack."""
        self._put("layouts", gpu, layout or None)
        self._put("stacks", gpu, stack)

    def set_electricity(self, usd_per_kwh: float | None) -> None:
        self._set(electricity_usd_per_kwh=usd_per_kwh)

    def set_power_cap(self, kw: float | None) -> None:
        self._set(power_cap_kw=kw)

    def set_time_premium(self, premium: float | None) -> None:
        self._set(time_premium=premium)

    # -- the gates and the probes -----------------------------------------------------

    def declare_stack(self, stack: Stack | None, box_stack: bool) -> None:
        self._set(stack=stack, box_stack=box_stack)

    def use_probes(self, records: Mapping[str, ProbeRecord],
                   choice: ProbeChoice | None) -> None:
        """The wizard's own probe records, and how they came (a run, a file, none)."""
        self._set(probe_records=records, probe_choice=choice)

    def set_use_stored(self, use: bool) -> None:
        self._set(use_stored=use)

    # -- Configurations ---------------------------------------------------------------

    def set_budget(self, budget: float | None) -> None:
        """The token budget, typed on Configurations: the answers sweep GPU counts again."""
        self.give("token_budget", budget)
        self._set(sweep=True)

    def set_configs(self, configs: ConfigOptions) -> None:
        self._set(configs=configs, sweep=True)

    def set_pipeline(self, spec: PipelineSpec | None) -> None:
        self._set(pipeline=spec)

    def reach(self, step: int) -> None:
        """A step is shown: it and every step before it are links from now on."""
        self._set(reached=max(self.reached, step))

    def gpus(self) -> list[str]:
        """The current GPU, then the targets, as the user listed them."""
        return [g for g in [self.current, *self.targets] if g]

    def current_spec(self) -> str | None:
        """The current GPU as Answers takes it: `id`, or `id@N` for a count of its own."""
        if self.current is None or self.current_count is None:
            return self.current
        return f"{self.current}@{self.current_count}"

    def target_specs(self) -> list[str]:
        """Targets as Answers takes them: `id`, or `id@N` for a count of its own."""
        return [f"{t}@{self.counts[t]}" if t in self.counts else t for t in self.targets]

    def workload_data(self) -> dict[str, Any]:
        """The given fields as Workload input (a serving mode drops training-only fields the
        user set before switching, and a training framework, which the engine would refuse)."""
        from advisor.tui.fields import applies, core_default

        mode = self.given.get("mode", core_default("mode"))
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.given.items()
                if applies(k, mode, v)}

    def layout_data(self) -> dict[str, dict[str, Any]]:
        """The per-GPU layouts for the GPUs being compared, those that say something."""
        gpus = set(self.gpus())
        return {g: dict(v) for g, v in self.layouts.items() if g in gpus and v}

    def resolved_prices(self, catalog: Catalog) -> dict[str, float]:
        """Typed prices in $/GPU-hour; a ratio is times the current GPU's price (its quote, or
        the catalog default). ValueError when a ratio has nothing to multiply."""
        out: dict[str, float] = {}
        base = self.current_price(catalog)
        for gpu in self.gpus():
            entry = self.quotes.get(gpu)
            if entry is None:
                continue
            kind, value = entry
            if kind == "usd":
                out[gpu] = value
            elif base is None:
                raise ValueError(f"the price of {gpu} is a ratio to {self.current}, which has "
                                 "no price: quote one for it")
            else:
                out[gpu] = round(value * base, 6)
        return out

    def current_price(self, catalog: Catalog) -> float | None:
        if self.current is None:
            return None
        entry = self.quotes.get(self.current)
        if entry is not None and entry[0] == "usd":
            return entry[1]
        default = catalog.default_price(self.current)
        return default.usd_per_hour if default else None

    def job_stack(self, hardware: Hardware) -> Stack | None:
        """The stack the software gate judges: declared, else this box's if it has a GPU (a
        CPU-only box's torch is not the GPU job's), else none (the gate is skipped)."""
        if self.stack is not None:
            return self.stack
        return hardware.stack if hardware.has_gpu and self.box_stack else None

    def to_answers(self, catalog: Catalog, hardware: Hardware) -> Answers:
        """The engine's Answers. Only what was given is passed, so every default stays a
        default (and the decision lists it); ValueError/InputError/ValidationError when
        the answers do not hold together yet."""
        from advisor.core import Answers, ConfigOptions

        self.check_valid()
        if self.current is None:
            raise ValueError("choose the current GPU first")
        if not self.targets:
            raise ValueError("add at least one target GPU")
        data: dict[str, Any] = {"current": self.current_spec(), "targets": self.target_specs(),
                                "workload": self.workload_data()}
        layouts = self.layout_data()
        if layouts:
            data["layouts"] = layouts
        if self.measured:
            data["measured"] = dict(self.measured)
        loaded = self.loaded
        if loaded is not None:
            for name in ("power_limits_w", "basis"):
                if name in loaded.model_fields_set:
                    data[name] = getattr(loaded, name)
        prices = self.resolved_prices(catalog)
        if prices:
            data["prices"] = prices
        if self.electricity_usd_per_kwh is not None:
            data["electricity_usd_per_kwh"] = self.electricity_usd_per_kwh
        if self.power_cap_kw is not None:
            data["power_cap_kw"] = self.power_cap_kw
        if self.time_premium is not None:
            data["time_premium"] = self.time_premium
        stack = self.job_stack(hardware)
        if stack is not None:
            data["stack"] = stack
        stacks = {g: st for g, st in self.stacks.items() if g in self.gpus()}
        if stacks:
            data["stacks"] = stacks
        # The wizard has a Configurations step, so its answers carry [configs] (the engine's
        # defaults until that step changes them); without a token budget the engine makes
        # no sweep, as for an answers file.
        if self.sweep:
            data["configs"] = self.configs or ConfigOptions()
        if self.pipeline is not None:
            data["pipeline"] = self.pipeline
        return Answers.model_validate(data)

    def check_valid(self) -> None:
        if self.invalid:
            where, message = next(iter(self.invalid.items()))
            raise ValueError(f"fix {where} first: {message}")

    def preview_answers(self, catalog: Catalog, hardware: Hardware) -> Answers:
        """Answers for the Workload step before any target is chosen: the current GPU against
        itself at twice the count. Each side is projected on its own, so the current GPU's
        re-tuned layout is the one the real decision will show."""
        if self.targets:
            answers = self.to_answers(catalog, hardware)
            return answers.model_copy(update={"configs": None, "pipeline": None})
        from advisor.core import Answers

        self.check_valid()
        if self.current is None:
            raise ValueError("choose the current GPU first")
        from advisor.tui.fields import core_default

        gpus = self.current_count or int(self.given.get("gpus", core_default("gpus")))
        data: dict[str, Any] = {"current": self.current_spec(),
                                "targets": [f"{self.current}@{2 * gpus}"],
                                "workload": self.workload_data()}
        stack = self.job_stack(hardware)
        if stack is not None:
            data["stack"] = stack
        return Answers.model_validate(data)


@dataclass
class Context:
    """What every step screen is handed: injected so tests can fake any of it."""

    hardware: Hardware
    runner: ProbeRunner
    state: WizardState
    loaded: Catalog | None = None
    """The catalog, once loaded: the wizard paints its first step before loading it."""

    @property
    def catalog(self) -> Catalog:
        if self.loaded is None:
            raise RuntimeError("the catalog is still loading")
        return self.loaded
