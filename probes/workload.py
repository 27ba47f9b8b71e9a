"""The workload probe: the user's own model shape, measured on this device.

Builds the model (see workload_model) with fewer layers than the whole model, at the
user's sequence length, micro-batch, precision and attention kernel, and times warm-up
and timed steps: training steps (forward, backward, AdamW) or, for serving, prefill
and decode steps over a KV cache. Two depths are run (1 layer, and up to 4 as memory
allows) so the time a layer adds is measured, not assumed; workload_record turns the
two into per-layer figures, what lies outside the layers, and the whole model
extrapolated on one device, and the record keeps the measured runs, the per-layer
figures and the extrapolation apart. A profiled window after the timed steps splits
the time into attention, GEMM and the rest (see kernel_split for the rules).

On a CPU the model runs at toy sizes (workload_shape.toy_shape) on one thread, and the
record says its figures are not GPU figures. Each depth keeps to its share of the
announced time: it starts a step only when the previous one says it fits (with room
left for the profiled steps). A first Ctrl-C stops after the current step and keeps
what was measured; a second stops at once, and the steps timed so far are still in the
record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import nvml
from .attention import Backend, flash_attn_backends, sdpa_backends
from .device import Device, synchronize
from .errors import describe, is_oom
from .kernel_split import RULES, device_time_us, samples_from_profile, split
from .matmul import dtype_support
from .runner import Box, Progress, StopFlag, _Stop, begin_record, conclude, execute, open_box
from .timing import Effort
from .workload_record import (
    GIB,
    WORKLOAD_TOY_NOTE,
    finish_run,
    finish_section,
    layers_text,
    new_run,
)
from .workload_shape import TOY_MICRO_BATCH, TOY_SEQ_LEN, ModelShape, WorkloadConfig, toy_shape

PHASES = {"train": ("train",), "lora": ("train",), "prefill": ("prefill",),
          "decode": ("decode",), "serve": ("prefill", "decode")}
# The measurement's time cap when the caller gives none, and what a stage costs beyond
# its steps (building the model, first-call kernel selection).
DEFAULT_BUDGET_S = {"gpu": 40.0, "small": 8.0}
STAGE_OVERHEAD_S = {"gpu": 4.0, "small": 0.5}
# Before the first stage: detection, the stamp (cuBLAS and NVML reads) and the first
# optimizer's construction, which imports torch._dynamo (3-4 s on a busy 2-core CPU).
RUN_OVERHEAD_S = {"gpu": 10.0, "small": 5.0}
STEP_EFFORT = {"gpu": Effort(3, 20, 3), "small": Effort(2, 10, 2)}
DECODE_EFFORT = {"gpu": Effort(3, 50, 5), "small": Effort(2, 20, 3)}
PROFILE_STEPS = {"gpu": 2, "small": 1}
PROFILE_OVERHEAD_S = {"gpu": 1.5, "small": 0.4}  # starting the profiler, reading its events
DEEPEST = 4  # the deeper depth when the caller gives none and memory allows
MEMORY_FRACTION = 0.8  # of the free GPU memory the deeper depth may plan to use
TOY_THREADS = 1


@dataclass(frozen=True)
class WorkloadPlan:
    config: WorkloadConfig
    shape_run: ModelShape
    toy: bool
    depths: tuple[int, ...]
    seq_len: int
    micro_batch: int
    decode_context: int | None
    precision: str  # what runs: bf16, fp16 or fp8
    fp8_dtype: str | None
    recompute: bool
    budget_s: float
    notes: tuple[str, ...]

    @property
    def device_class(self) -> str:
        return "small" if self.toy else "gpu"

    @property
    def phases(self) -> tuple[str, ...]:
        return PHASES[self.config.mode]

    @property
    def training(self) -> bool:
        return self.config.mode in ("train", "lora")

    @property
    def stage_budget_s(self) -> float:
        return self.budget_s / len(self.depths)

    def stage_name(self, depth: int) -> str:
        return f"workload {layers_text(depth)}"

    def estimates(self) -> dict[str, float]:
        over = STAGE_OVERHEAD_S[self.device_class]
        return {self.stage_name(d): self.stage_budget_s + over for d in self.depths}

    def estimate_s(self) -> float:
        return RUN_OVERHEAD_S[self.device_class] + sum(self.estimates().values())

    def tokens_per_step(self, phase: str) -> int:
        return self.micro_batch * (1 if phase == "decode" else self.seq_len)

    def run_settings(self) -> dict[str, Any]:
        return {"preset": "workload", "mode": self.config.mode, "toy_sizes": self.toy,
                "budget_s": self.budget_s}

    def settings(self) -> dict[str, Any]:
        c = self.config
        return {"preset": "workload", "mode": c.mode, "toy_sizes": self.toy,
                "budget_s": self.budget_s, "depths": list(self.depths),
                "attention": c.attention, "precision": self.precision,
                "seq_len": self.seq_len, "micro_batch": self.micro_batch}


def _memory_bytes(shape: ModelShape, depth: int, tokens: int, training: bool,
                  context: int, batch: int) -> float:
    """A rough plan of what `depth` layers hold, to pick a depth that fits; an OOM is
    still caught and said."""
    active = shape.ffn if not shape.moe else (
        (shape.active_experts + shape.shared_experts) * shape.expert_ffn)
    if training:
        weights = 16.0 * (shape.embedding_params() + depth * shape.layer_params())
        acts = depth * tokens * (34.0 * shape.hidden + 10.0 * active)
        return weights + acts + 10.0 * tokens * shape.vocab
    kv = depth * 2 * batch * context * shape.kv_heads * shape.head_dim * 2
    return 2.0 * (shape.embedding_params() + depth * shape.layer_params()) + kv + (
        tokens * (8.0 * shape.hidden + 4.0 * active))


def _free_bytes(device: Device) -> int | None:
    if not device.is_gpu:
        return None
    try:
        import torch

        return int(torch.cuda.mem_get_info(device.index)[0])
    except Exception:
        return None


def _precision(config: WorkloadConfig, device: Device, identity: dict[str, Any],
               tokens: int, shape: ModelShape) -> tuple[str, str | None, str | None]:
    """What runs (bf16, fp16 or fp8), the torch fp8 dtype, and a note when it is not what
    was asked."""
    asked = config.precision
    if asked in ("bf16", "fp16"):
        return asked, None, None
    if asked != "fp8":
        return "bf16", None, (f"{asked} skipped: the probe builds no {asked} recipe (it needs "
                              "Transformer Engine or vendor kernels); measured at bf16")
    why = dtype_support(device, "fp8", identity.get("capability"), identity.get("gcn_arch"))
    if why is None:
        dims = (shape.hidden, shape.heads * shape.head_dim,
                (shape.heads + 2 * shape.kv_heads) * shape.head_dim, shape.ffn, tokens)
        if any(d % 16 for d in dims):
            why = (f"torch._scaled_mm needs every GEMM dimension a multiple of 16 (tokens "
                   f"{tokens}, widths {', '.join(map(str, dims[:-1]))})")
    if why is not None:
        return "bf16", None, f"fp8 skipped: {why}; measured at bf16"
    from .matmul import fp8_format

    return "fp8", fp8_format(device, identity.get("capability"), identity.get("gcn_arch"))[0], None


def plan_workload(config: WorkloadConfig, device: Device,
                  identity: dict[str, Any] | None = None) -> WorkloadPlan:
    """Concrete sizes for this device: toy shape on a CPU, the depths, the precision."""
    config = config.checked()
    identity = identity or {}
    toy = not device.is_gpu
    cls = "small" if toy else "gpu"
    shape = toy_shape(config.shape) if toy else config.shape
    seq = min(config.seq_len, TOY_SEQ_LEN) if toy else config.seq_len
    batch = min(config.micro_batch, TOY_MICRO_BATCH) if toy else config.micro_batch
    notes = list(config.notes)
    context = None
    if config.mode == "decode":
        context = seq
    elif config.mode == "serve":
        assert config.osl is not None
        osl = min(config.osl, seq) if toy else config.osl
        context = seq + osl // 2  # the mean context a request decodes at
    training = config.mode in ("train", "lora")
    tokens = batch * (1 if config.mode == "decode" else seq)
    precision, fp8_dtype, why = _precision(config, device, identity, tokens, shape)
    if why:
        notes.append(why)
    if config.mode == "serve" and precision == "fp8" and batch % 16:
        precision, fp8_dtype = "bf16", None
        notes.append(f"fp8 skipped: decode GEMMs have {batch} rows, and torch._scaled_mm "
                     "needs a multiple of 16; measured at bf16")
    if config.recompute == "selective":
        notes.append("recompute selective is not built by the probe; ran without recompute")
    full = config.shape.layers
    deep = config.depth or min(full, DEEPEST)
    free = _free_bytes(device)
    if config.depth is None and free is not None:
        while deep > 1 and _memory_bytes(shape, deep, tokens, training, context or seq,
                                         batch) > MEMORY_FRACTION * free:
            deep -= 1
    depths = (1, deep) if deep >= 2 else (deep,)
    return WorkloadPlan(
        config=config, shape_run=shape, toy=toy, depths=depths, seq_len=seq,
        micro_batch=batch, decode_context=context, precision=precision, fp8_dtype=fp8_dtype,
        recompute=config.recompute == "full", budget_s=config.budget_s or DEFAULT_BUDGET_S[cls],
        notes=tuple(notes),
    )


def _sdpa_kernel(kernel: Any) -> Callable[[Any, Any, Any, bool], Any]:
    """An SDPA kernel (heads before sequence) called on the model's (batch, seq, heads, d)."""

    def attend(q: Any, k: Any, v: Any, causal: bool) -> Any:
        out = kernel(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal)
        return out.transpose(1, 2)

    return attend


def _flash_kernel(kernel: Any) -> Callable[[Any, Any, Any, bool], Any]:
    def attend(q: Any, k: Any, v: Any, causal: bool) -> Any:
        out = kernel(q, k, v, causal)
        return out[0] if isinstance(out, tuple | list) else out

    return attend


def attention_backend(requested: str, device: Device) -> tuple[Backend, str | None]:
    """The kernel to run and a note when it is not the one asked for. "auto" and "sdpa" let
    SDPA's dispatcher choose (the profile names what it chose)."""
    sdpa, _ = sdpa_backends(device)
    flash, flash_notes = flash_attn_backends(device)
    by_name = {b.name: b for b in (*sdpa, *flash)}
    unpinned = dataclasses.replace(sdpa[-1], name="sdpa", context=contextlib.nullcontext)
    if requested in ("auto", "sdpa"):
        return unpinned, None
    if requested in by_name:
        return by_name[requested], None
    why = next((n for n in flash_notes if n.startswith(requested + ":")), None)
    why = why or f"{requested}: not available on {device.kind.upper()}"
    return unpinned, f"attention {why}; ran torch SDPA's own choice"


def _attend(backend: Backend) -> Callable[[Any, Any, Any, bool], Any]:
    return (_sdpa_kernel if backend.layout == "bhsd" else _flash_kernel)(backend.kernel)


_KINETO_CHATTER = re.compile(r"^[A-Z]+:\d{4}-\d\d-\d\d [\d:]+ \d+:\d+ \S+\.cpp:\d+\]")


@contextlib.contextmanager
def _quiet_profiler() -> Iterator[None]:
    """The profiler's C++ side prints start/stop lines on stderr; hold stderr for the window
    and give back every other line."""
    with tempfile.TemporaryFile() as held:
        try:
            sys.stderr.flush()
            saved = os.dup(2)
            os.dup2(held.fileno(), 2)
        except (OSError, ValueError):
            yield
            return
        try:
            yield
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().decode(errors="replace").splitlines(keepends=True)
            kept = "".join(line for line in lines if not _KINETO_CHATTER.match(line))
            if kept:
                with contextlib.suppress(OSError):
                    os.write(2, kept.encode())


def _cpu_memory_rise(prof: Any) -> float | None:
    """The largest rise of CPU allocations over the profiled window, from the profiler's
    memory events (bytes); None when this torch does not expose them."""
    try:
        events = prof.profiler.kineto_results.events()
        moves = sorted((e.start_ns(), e.nbytes()) for e in events
                       if e.name() == "[memory]" and str(e.device_type()).endswith("CPU"))
    except Exception:
        return None
    level = peak = 0
    for _, nbytes in moves:
        level += nbytes
        peak = max(peak, level)
    return float(peak)


class _Step:
    """A step to time, with what it holds in memory and how to profile it."""

    def __init__(self, fn: Callable[[], Any], held_bytes: Callable[[], int],
                 context: Callable[[], Any]) -> None:
        self.fn = fn
        self.held_bytes = held_bytes
        self.context = context

    def __call__(self) -> None:
        with self.context():
            self.fn()


def _tensor_bytes(tensors: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


class _DepthRun:
    """One stage: the model at one depth, each phase's steps timed and profiled."""

    def __init__(self, plan: WorkloadPlan, device: Device, backend: Backend, depth: int,
                 sampler: Any, report: Callable[[float, str], None], stop: _Stop,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.plan, self.device, self.backend, self.depth = plan, device, backend, depth
        self.sampler, self.report, self.stop, self.clock = sampler, report, stop, clock
        self.deadline = clock() + plan.stage_budget_s

    # --- building ---------------------------------------------------------------------

    def _model(self) -> Any:
        import torch

        from .workload_model import Fp8Format, Transformer

        plan = self.plan
        fp8 = Fp8Format(plan.fp8_dtype) if plan.fp8_dtype else None
        positions = max(plan.seq_len, plan.decode_context or 0)
        lora = plan.config.lora_rank if plan.config.mode == "lora" else 0
        torch.manual_seed(0)
        with torch.device(self.device.torch_device):
            model = Transformer(plan.shape_run, self.depth, _attend(self.backend), positions,
                                fp8=fp8, lora_rank=lora, recompute=plan.recompute)
        if not plan.training:
            model = model.to(self._dtype()).eval()
        return model

    def _dtype(self) -> Any:
        import torch

        return torch.float16 if self.plan.precision == "fp16" else torch.bfloat16

    def train_step(self) -> _Step:
        import torch

        model = self._model()
        plan, dev = self.plan, self.device.torch_device
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=1e-5, fused=_fused(self.device))
        kind = dev.split(":")[0]
        scaler = torch.amp.GradScaler(kind) if plan.precision == "fp16" else None
        shape = (plan.micro_batch, plan.seq_len)
        tokens = torch.randint(0, plan.shape_run.vocab, shape, device=dev)
        targets = torch.randint(0, plan.shape_run.vocab, shape, device=dev)

        def step() -> None:
            with torch.autocast(kind, dtype=self._dtype()):
                loss = model.loss(tokens, targets)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            opt.zero_grad(set_to_none=True)

        def held() -> int:
            state = [t for s in opt.state.values() for t in s.values()
                     if isinstance(t, torch.Tensor)]
            return _tensor_bytes([*model.parameters(), *model.buffers(), *state])

        return _Step(step, held, self.backend.context)

    def serve_steps(self) -> dict[str, _Step]:
        import torch

        from .workload_model import KVCache

        model = self._model()
        plan, dev, shape = self.plan, self.device.torch_device, self.plan.shape_run
        length = plan.decode_context or plan.seq_len
        cache = KVCache(self.depth, plan.micro_batch, length, shape.kv_heads, shape.head_dim,
                        self._dtype(), dev)
        prompt = torch.randint(0, shape.vocab, (plan.micro_batch, plan.seq_len), device=dev)
        token = torch.randint(0, shape.vocab, (plan.micro_batch, 1), device=dev)

        @torch.no_grad()
        def prefill() -> None:
            model.next_token_logits(prompt, 0, cache)

        @torch.no_grad()
        def decode() -> None:  # the last slot each time: every step sees `length` positions
            model.next_token_logits(token, length - 1, cache)

        def held() -> int:
            return _tensor_bytes([*model.parameters(), *model.buffers()]) + cache.nbytes()

        return {"prefill": _Step(prefill, held, self.backend.context),
                "decode": _Step(decode, held, self.backend.context)}

    # --- measuring --------------------------------------------------------------------

    def _phase_report(self, index: int, count: int) -> Callable[[float, str], None]:
        """Progress within one phase, as a share of the stage (prefill, then decode)."""

        def report(fraction: float, message: str) -> None:
            self.report((index + fraction) / count, message)

        return report

    def _timed(self, step: _Step) -> float:
        synchronize(self.device)
        t0 = self.clock()
        step()
        synchronize(self.device)
        return self.clock() - t0

    def measure(self, phase: str, step: _Step, entry: dict[str, Any], deadline: float,
                report: Callable[[float, str], None]) -> None:
        """Warm-up, timed and profiled steps into `entry`, as far as time and Ctrl-C allow."""
        cls = self.plan.device_class
        effort = (DECODE_EFFORT if phase == "decode" else STEP_EFFORT)[cls]
        label = f"{phase}, {layers_text(self.depth)}"
        warm: list[float] = []
        for _ in range(effort.warmup):
            if warm and (self.stop() or self.clock() + warm[-1] > deadline):
                break
            warm.append(self._timed(step))
            entry["warmup_steps"] = len(warm)
            entry["first_step_ms"] = round(warm[0] * 1e3, 3)
            report(0.1, f"{label}: warm-up step {len(warm)} took {warm[-1]:.3g} s")
        profile_steps = PROFILE_STEPS[cls]
        last = warm[-1]
        times: list[float] = entry["steps_ms"]
        t_start = self.clock()
        while len(times) < effort.iters and not self.stop():
            left = deadline - self.clock()
            profiling = PROFILE_OVERHEAD_S[cls] + 2 * profile_steps * last
            if times and (last > left or (len(times) >= effort.min_iters
                                          and last + profiling > left)):
                break
            last = self._timed(step)
            times.append(round(last * 1e3, 4))
            report(0.1 + 0.7 * len(times) / effort.iters,
                        f"{label}: {len(times)} steps timed, median "
                        f"{statistics.median(times):.4g} ms")
        if self.sampler is not None:
            entry["gpu_state"] = self.sampler.state(0, t_start, self.clock())
        if not self.stop():
            self._profile(step, profile_steps, entry)
            entry["status"] = "ok"

    def _profile(self, step: _Step, steps: int, entry: dict[str, Any]) -> None:
        from torch.profiler import ProfilerActivity, profile

        gpu = self.device.is_gpu
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
        held = step.held_bytes()
        with _quiet_profiler():
            with profile(activities=activities, profile_memory=not gpu) as prof:
                for _ in range(steps):
                    step()
                    synchronize(self.device)
            events = prof.events()
        parts = split(samples_from_profile(events, gpu))
        if gpu:
            parts.us["other"] += max(0.0, device_time_us(events) - parts.total_us)
        if not gpu:
            rise = _cpu_memory_rise(prof)
            if rise is not None:
                entry["peak_memory_gib"] = round((held + rise) / GIB, 4)
                entry["memory_source"] = (
                    "CPU: parameters, optimizer state and KV cache held at the start of a "
                    "profiled step plus the largest rise of allocations during it")
        entry["split_us"] = {**parts.us, "steps": steps, "samples": parts.samples}
        entry["attention_ops"] = parts.attention_ops

    def run(self, record: dict[str, Any]) -> None:
        import torch

        plan = self.plan
        runs = {p["phase"]: p["runs"] for p in record["workload"]["phases"]}
        entries = {phase: new_run(self.depth) for phase in plan.phases}
        for phase, entry in entries.items():
            runs[phase].append(entry)
        _release(self.device)
        self.report(0.0, f"building {layers_text(self.depth)}")
        t0 = self.clock()
        try:
            steps = ({"train": self.train_step()} if plan.training else self.serve_steps())
        except Exception as exc:
            for entry in entries.values():
                entry.update(status="failed", reason=f"building the model: {describe(exc)}")
            _release(self.device)
            return
        build_s = self.clock() - t0
        share = (self.deadline - self.clock()) / len(entries)
        for i, (phase, entry) in enumerate(entries.items()):
            entry["build_s"] = round(build_s, 3)
            if self.stop():
                entry.update(status="stopped",
                             reason="stopped early (Ctrl-C) before its first step")
                continue
            if self.device.is_gpu:
                torch.cuda.reset_peak_memory_stats(self.device.index)
            entry["status"] = "running"
            try:
                self.measure(phase, steps[phase], entry, self.clock() + share,
                             self._phase_report(i, len(entries)))
            except Exception as exc:
                entry.update(status="failed", reason=describe(exc))
                if is_oom(exc):
                    entry["reason"] = (f"out of memory at {layers_text(self.depth)}; "
                                       "pass a smaller --depth")
            if self.device.is_gpu:
                entry["peak_memory_gib"] = round(
                    torch.cuda.max_memory_allocated(self.device.index) / GIB, 3)
                entry["peak_reserved_gib"] = round(
                    torch.cuda.max_memory_reserved(self.device.index) / GIB, 3)
                entry["memory_source"] = "torch.cuda.max_memory_allocated (and _reserved)"
            finish_run(entry, plan.tokens_per_step(phase), stopped=self.stop())
            if i + 1 < len(entries):
                share = (self.deadline - self.clock()) / (len(entries) - i - 1)
        del steps
        _release(self.device)
        finish_section(record["workload"], stopped=False)


@contextlib.contextmanager
def _threads(plan: WorkloadPlan) -> Iterator[None]:
    """A toy run uses one CPU thread: on a shared machine a second busy core stalls every
    op's thread barrier, and the toy figures would be the neighbours' load."""
    import torch

    before = torch.get_num_threads()
    if plan.toy:
        torch.set_num_threads(TOY_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _first_use(device: Device) -> None:
    """Pay the one-off costs (the model module, the optimizer's first construction, about a
    second on a CPU) before the plan is announced, not inside the first depth's share."""
    import torch

    from . import workload_model  # noqa: F401

    dummy = torch.zeros(1, device=device.torch_device, requires_grad=True)
    torch.optim.AdamW([dummy], fused=_fused(device))


def _fused(device: Device) -> bool:
    """torch's fused AdamW runs on CUDA, ROCm and the CPU; MPS takes the foreach path."""
    return device.kind != "mps"


def _release(device: Device) -> None:
    gc.collect()
    if device.is_gpu:
        import torch

        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device.index)


def new_section(plan: WorkloadPlan, backend: Backend, device: Device) -> dict[str, Any]:
    c = plan.config
    notes = list(plan.notes)
    if plan.shape_run.moe:
        notes.append("experts run in a per-expert loop (as Hugging Face's reference MoE), "
                     "not a grouped-GEMM kernel; routing of random tokens is near uniform")
    if plan.fp8_dtype:
        notes.append("fp8: attention and dense-MLP projections through torch._scaled_mm with "
                     "per-tensor dynamic scales; LM head, router and experts in bf16")
    if not plan.training:
        notes.append("eager PyTorch without CUDA graphs: decode steps pay every kernel "
                     "launch, as serving engines that capture graphs do not")
    if plan.toy:
        notes.insert(0, WORKLOAD_TOY_NOTE)
    return {
        "status": "not run",
        "mode": c.mode,
        "source": c.source,
        "shape": c.shape.to_dict(),
        "shape_run": plan.shape_run.to_dict(),
        "toy_sizes": plan.toy,
        "device": device.kind,
        "device_name": device.name,
        "layers_total": c.shape.layers,
        "layers_run": list(plan.depths),
        "seq_len": c.seq_len,
        "seq_len_run": plan.seq_len,
        "micro_batch": c.micro_batch,
        "micro_batch_run": plan.micro_batch,
        "osl": c.osl,
        "decode_context": plan.decode_context,
        "precision_requested": c.precision,
        "precision": plan.precision,
        "fp8_dtype": plan.fp8_dtype,
        "attention_kernel_requested": c.attention,
        "attention_kernel": backend.name,
        "attention_ops": [],
        "recompute": "full" if plan.recompute else "none",
        "lora_rank": c.lora_rank if c.mode == "lora" else None,
        "optimizer": _optimizer_text(plan, device),
        "budget_s": plan.budget_s,
        "cpu_threads": TOY_THREADS if plan.toy else None,
        "classification": RULES,
        "phases": [{"phase": p, "tokens_per_step": plan.tokens_per_step(p), "runs": [],
                    "per_layer": None, "outside_layers": None, "full_model": None,
                    "reason": None} for p in plan.phases],
        "notes": notes,
    }


def _optimizer_text(plan: WorkloadPlan, device: Device) -> str | None:
    if not plan.training:
        return None
    how = "fused" if _fused(device) else "foreach"
    cast = "bf16 (fp8 GEMMs)" if plan.precision == "fp8" else plan.precision
    return f"AdamW ({how}) over fp32 parameters and state; autocast to {cast}"


def announce(plan: WorkloadPlan, backend: Backend, estimates: dict[str, float],
             estimate_s: float) -> str:
    c, shape = plan.config, plan.shape_run
    depths = " and ".join(map(str, plan.depths))
    seq = f"seq {plan.seq_len}" + (f" (asked {c.seq_len})" if plan.seq_len != c.seq_len else "")
    batch = f"micro-batch {plan.micro_batch}" + (
        f" (asked {c.micro_batch})" if plan.micro_batch != c.micro_batch else "")
    shown = ", ".join(f"{k} ~{v:.0f} s" for k, v in estimates.items())
    head = f"{WORKLOAD_TOY_NOTE}. " if plan.toy else ""
    return (f"{head}{c.shape.name} {c.mode} at layers {depths} of {c.shape.layers} "
            f"(hidden {shape.hidden}), {seq}, {batch}, {plan.precision}, attention "
            f"{backend.name}; about {estimate_s:.0f} s: {shown}")


def run_workload(
    config: WorkloadConfig,
    progress: Callable[[Progress], None] | None = None,
    stop: StopFlag | None = None,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Plan, stamp and run the workload probe; the record (partial if stopped)."""
    t0 = time.perf_counter()
    box: Box = open_box(config.device, config.catalog_id)
    plan = plan_workload(config, box.device, box.identity)
    _first_use(box.device)
    backend, why = attention_backend(plan.config.attention, box.device)
    if why:
        plan = dataclasses.replace(plan, notes=(*plan.notes, why))
    estimates = plan.estimates()
    record = begin_record(box, plan.settings(), plan.run_settings(), estimates,
                          plan.estimate_s())
    record["workload"] = new_section(plan, backend, box.device)
    if plan.toy:
        record["notes"].append(WORKLOAD_TOY_NOTE)
    stop_flag = _Stop(stop)
    sampler = None
    if box.nvml_module is not None:
        try:
            uuid = box.identity["uuids"][0] if box.identity["uuids"] else None
            sampler = nvml.Sampler(box.nvml_module, [uuid]).start()
        except Exception as exc:
            record["notes"].append(f"NVML telemetry unavailable: {describe(exc)}")

    def stage(depth: int) -> Any:
        def run(record: dict[str, Any], report: Callable[[float, str], None],
                stop: _Stop) -> None:
            _DepthRun(plan, box.device, backend, depth, sampler, report, stop).run(record)

        return plan.stage_name(depth), run

    message = announce(plan, backend, estimates, record["estimate_s"])
    try:
        with _threads(plan):
            execute(record, [stage(d) for d in plan.depths], estimates, message, progress,
                    stop_flag, checkpoint, t0)
    finally:
        if sampler is not None:
            sampler.stop()
    finish_section(record["workload"], stop_flag.requested)
    return conclude(record, stop_flag, t0, progress)
