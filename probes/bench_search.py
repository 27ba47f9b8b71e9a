"""Benchmark: the quick MAMF search against the exhaustive sweep, over one declared space.

    python -m probes.bench_search [--device cpu] [--dtype bf16] [--space LO HI STEP]

Both searches run over the same declared space (M, N and K each LO..HI step
STEP) on real matmuls, each after the same warm-up:

1. the exhaustive sweep measures every shape of the space;
2. the quick search runs with its own budget as a cap and stops when it has
   converged, so its time is measured, not set;
3. the two winners are then re-measured alternately (ABBA order, so drift
   cancels) with the burst-MAMF protocol the record uses, and mamf_ratio is
   the median of the per-round quick/exhaustive ratios, with its noise (the
   median absolute deviation of those ratios) next to it.

time_ratio is the wall-clock time of the quick search over that of the
exhaustive sweep, warm-up included in both. On a GPU the design target is
mamf_ratio >= 0.98 with time_ratio <= 0.05. On a CPU this is a smoke test of
the code path: a CPU's flat, noisy landscape says nothing about that target.
The default GPU space is M, N, K each 2048..20480 step 2048 (1,000 shapes,
about 2 minutes on an H100-class GPU); --suite-space uses the suite's own
8,000-shape space (hours). The last line is
`mamf_ratio=<r> mamf_noise=<n> time_ratio=<t> shapes_quick=<q> shapes_exhaustive=<e>`.
"""

from __future__ import annotations

if __name__ == "__main__":  # Ctrl-C policy first, before torch is imported
    import os as _os
    import signal as _signal

    _signal.signal(_signal.SIGINT, lambda signum, frame: _os._exit(130))
    from .interrupts import CONTROLLER

    CONTROLLER.install("bench_search")

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Sequence

from .interrupts import EXIT_INTERRUPTED, MEASURING, Interrupts, command_scope
from .search import AdaptivePlan, SearchSpace, Shape, adaptive_search, exhaustive_search, fmt_shape
from .timing import Effort

BENCH_GPU_SPACE = SearchSpace(2048, 20480, 2048)
BENCH_GPU_EXHAUSTIVE = Effort(5, 25)
TARGET_RATIO, TARGET_TIME = 0.98, 0.05


def ratio_stats(quick: Sequence[float], full: Sequence[float]) -> tuple[float, float]:
    """Median of the per-round ratios and their median absolute deviation."""
    ratios = [q / f for q, f in zip(quick, full, strict=True) if f > 0]
    if not ratios:
        return float("nan"), float("nan")
    mid = statistics.median(ratios)
    return mid, statistics.median(abs(r - mid) for r in ratios)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m probes.bench_search",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "rocm", "mps", "cpu"))
    parser.add_argument("--dtype", default="bf16")
    parser.add_argument("--space", type=int, nargs=3, metavar=("LO", "HI", "STEP"),
                        help="M, N and K each LO..HI (inclusive) in steps of STEP")
    parser.add_argument("--suite-space", action="store_true",
                        help="the suite's own search space (GPU: 8,000 shapes, hours)")
    parser.add_argument("--budget", type=float,
                        help="cap on the quick search, seconds (default: the suite's budget for "
                        "the dtype); it normally stops earlier, when it has converged")
    parser.add_argument("--rounds", type=int, default=5, help="alternating re-measurements")
    parser.add_argument("--max-shapes", type=int, help="cap on the quick search's shapes")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPU only: torch threads (default 1: a multi-threaded matmul waits for its slowest "
        "thread, so other jobs on a shared box would swamp the comparison)",
    )
    args = parser.parse_args(argv)
    with command_scope("bench_search") as interrupts:
        try:
            return _run(args, interrupts)
        except KeyboardInterrupt:
            print("bench_search: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            return 141


def _run(args: argparse.Namespace, interrupts: Interrupts) -> int:
    from .device import detect
    from .matmul import (
        MatmulBench,
        dtype_support,
        float32_precision,
        fp8_format,
        profile_for,
    )
    from .plan import _GPU, _SMALL
    from .stamp import gpu_identity

    if args.rounds < 1 or (args.budget is not None and args.budget <= 0):
        print("bench_search: --rounds and --budget must be positive", file=sys.stderr)
        return 2
    try:
        device = detect(args.device)
    except ValueError as exc:
        print(f"bench_search: {exc}", file=sys.stderr)
        return 2
    if device.kind == "cpu":
        import torch

        torch.set_num_threads(max(1, args.threads))
    ident = gpu_identity(device)
    why = dtype_support(device, args.dtype, ident["capability"], ident["gcn_arch"])
    if why:
        print(f"bench_search: {args.dtype} cannot run here: {why}", file=sys.stderr)
        return 2
    base = profile_for(device)
    try:
        if args.space:
            space = SearchSpace(*args.space)
        elif args.suite_space or not device.is_gpu:
            space = base.space
        else:
            space = BENCH_GPU_SPACE
    except ValueError as exc:
        print(f"bench_search: --space: {exc}", file=sys.stderr)
        return 2
    exhaustive_effort = BENCH_GPU_EXHAUSTIVE if device.is_gpu else base.exhaustive
    profile = dataclasses.replace(base, space=space, exhaustive=exhaustive_effort)
    preset = (_GPU if device.is_gpu else _SMALL)["default"]
    budget = args.budget or preset.budget_s.get(args.dtype, max(preset.budget_s.values()))
    smoke = not device.is_gpu
    threads = f", {args.threads} thread(s)" if device.kind == "cpu" else ""
    if smoke:
        print(
            f"SMOKE TEST on {device.kind.upper()}: toy sizes on a flat, noisy landscape; the "
            "ratios below check the code path and say nothing about the GPU design target "
            f"(mamf_ratio >= {TARGET_RATIO} in time_ratio <= {TARGET_TIME})"
        )
    print(f"device: {device.name} ({device.kind}{threads}); dtype {args.dtype}")
    print(f"declared space (both searches): {space.describe()}")
    print(
        f"exhaustive: every shape at {exhaustive_effort.warmup}+{exhaustive_effort.iters} "
        f"iterations; quick: screening at {base.screen.warmup}+{base.screen.iters}, "
        f"budget cap {budget:g} s; both after {base.warmup_s:g} s of warm-up"
    )
    fp8 = (
        fp8_format(device, ident["capability"], ident["gcn_arch"])[0]
        if args.dtype == "fp8"
        else None
    )
    interrupts.enter(MEASURING)

    def should_stop() -> bool:
        return interrupts.measuring_count > 0

    big: Shape = (space.hi, space.hi, space.k_range[1])
    with float32_precision(args.dtype):
        bench = MatmulBench(device, args.dtype, fp8, should_stop=should_stop)
        t0 = time.perf_counter()
        bench.warm(big, base.warmup_s)
        full = exhaustive_search(
            bench.measure, space.shapes(), exhaustive_effort, should_stop=should_stop
        )
        t_full = time.perf_counter() - t0
        t0 = time.perf_counter()
        bench.warm(big, base.warmup_s)
        quick = adaptive_search(
            bench.measure,
            AdaptivePlan(
                space=space,
                budget_s=budget,
                screen=base.screen,
                coarse_per_dim=base.coarse_per_dim,
                max_shapes=args.max_shapes,
            ),
            should_stop=should_stop,
        )
        t_quick = time.perf_counter() - t0
        if should_stop():
            print("bench_search: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if not (full.best_shape and quick.best_shape and full.best and quick.best):
            print("bench_search: a search found no runnable shape", file=sys.stderr)
            return 1
        q_shape, f_shape = quick.best_shape, full.best_shape
        q_runs: list[float] = []
        f_runs: list[float] = []
        for r in range(args.rounds):
            order = [(q_shape, q_runs), (f_shape, f_runs)]
            for shape, runs in order if r % 2 == 0 else order[::-1]:
                burst = bench.burst(shape, profile.burst, None)
                runs.append(burst.tflops if burst else 0.0)
    in_space = all(s in space for s in (q_shape, f_shape))
    print(
        f"exhaustive: best {full.best.median_tflops:.4g} TFLOPS (median) at {fmt_shape(f_shape)}, "
        f"{full.shapes_tried} shapes in {t_full:.1f} s"
    )
    print(
        f"quick: best {quick.best.median_tflops:.4g} TFLOPS (median) at {fmt_shape(q_shape)}, "
        f"{quick.shapes_tried} shapes in {t_quick:.1f} s (stopped: {quick.stopped_by})"
    )
    mamf_ratio, noise = ratio_stats(q_runs, f_runs)
    time_ratio = t_quick / t_full if t_full > 0 else float("nan")
    same = " (the same shape: the ratio is 1 by construction)" if q_shape == f_shape else ""
    print(
        f"re-measured alternately, {args.rounds} rounds, burst MAMF: quick "
        f"{', '.join(f'{x:.4g}' for x in q_runs)}; exhaustive "
        f"{', '.join(f'{x:.4g}' for x in f_runs)} TFLOPS{same}"
    )
    if not in_space:
        print("bench_search: a winner lies outside the declared space (a bug)", file=sys.stderr)
        return 1
    if smoke:
        print("verdict: smoke test only (CPU); run on a GPU for the design target")
    elif mamf_ratio >= TARGET_RATIO and time_ratio <= TARGET_TIME:
        print(f"verdict: PASS: quick reached {mamf_ratio:.3f} of exhaustive in {time_ratio:.1%} of "
              "its time")
    else:
        print(f"verdict: FAIL: quick reached {mamf_ratio:.3f} of exhaustive in {time_ratio:.1%} of "
              f"its time (target >= {TARGET_RATIO} in <= {TARGET_TIME:.0%})")
    print(
        f"mamf_ratio={mamf_ratio:.3f} mamf_noise={noise:.3f} time_ratio={time_ratio:.3f} "
        f"shapes_quick={quick.shapes_tried} shapes_exhaustive={full.shapes_tried}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
