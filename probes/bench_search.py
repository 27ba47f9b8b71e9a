"""Benchmark: the quick MAMF search against the exhaustive grid, side by side, on real matmuls.

    python -m probes.bench_search [--device cpu] [--dtype bf16] [--grid START STOP STEP]

Runs the exhaustive grid first (it also heats the device, which only handicaps
the quick search that follows), gives the quick search a budget of 4% of the
exhaustive time unless --budget says otherwise, then re-measures both winners
alternately with the confirmation effort so that neither keeps a lucky sample:
mamf_ratio compares their MAMF as the record defines it (the fastest iteration,
which background load cannot inflate); the median ratio is printed too.
time_ratio compares the wall-clock time of the two searches, warm-up included.

The grid is CI-sized unless --full-grid: on a GPU m, n, k each 1024..15360 step
2048 (512 shapes) instead of mamf-finder's step 1024 (3,375 shapes, 15-30 min);
on CPU/MPS 128..1024 step 128 (512 shapes of toy size). The last line is
`mamf_ratio=<quick/exhaustive> time_ratio=<quick/exhaustive>`.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Sequence

from probes.device import detect
from probes.matmul import (
    MatmulBench,
    dtype_support,
    float32_precision,
    fp8_format,
    profile_for,
    search,
)
from probes.search import Sample, Shape, fmt_shape, grid_shapes, mamf_grid
from probes.stamp import gpu_identity
from probes.timing import Effort

CI_GPU_GRID = (0, 16384, 2048)


def remeasure(
    bench: MatmulBench, shapes: Sequence[Shape], rounds: int, effort: Effort
) -> list[Sample]:
    """Per shape, over `rounds` measured alternately: the median of the round medians, and
    the fastest iteration seen (the record's mamf_tflops), which background load cannot inflate."""
    medians: list[list[float]] = [[] for _ in shapes]
    fastest = [0.0 for _ in shapes]
    for _ in range(rounds):
        for i, shape in enumerate(shapes):
            s = bench.measure(shape, effort)
            if s is not None:
                medians[i].append(s.median_tflops)
                fastest[i] = max(fastest[i], s.max_tflops)
    return [
        Sample(statistics.median(m) if m else 0.0, f) for m, f in zip(medians, fastest, strict=True)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m probes.bench_search",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "rocm", "mps", "cpu"))
    parser.add_argument("--dtype", default="bf16")
    parser.add_argument("--grid", type=int, nargs=3, metavar=("START", "STOP", "STEP"))
    parser.add_argument("--full-grid", action="store_true", help="mamf-finder's exhaustive grid")
    parser.add_argument(
        "--budget", type=float, help="quick-search seconds (default 4%% of exhaustive)"
    )
    parser.add_argument(
        "--fraction", type=float, default=0.04, help="quick budget / exhaustive time"
    )
    parser.add_argument("--rounds", type=int, default=7, help="alternating re-measurements")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="CPU only: torch threads (default 1: a multi-threaded matmul waits for its slowest "
        "thread, so other jobs on a shared box would swamp the comparison)",
    )
    args = parser.parse_args(argv)

    device = detect(args.device)
    if device.kind == "cpu":
        import torch

        torch.set_num_threads(args.threads)
    ident = gpu_identity(device)
    why = dtype_support(device, args.dtype, ident["capability"], ident["gcn_arch"])
    if why:
        print(f"bench_search: {args.dtype} cannot run here: {why}", file=sys.stderr)
        return 2
    base = profile_for(device)
    if args.grid:
        grid = tuple(args.grid)
    elif args.full_grid or not device.is_gpu:
        grid = base.grid
    else:
        grid = CI_GPU_GRID
    # Same warm-up for both searches, so the time ratio compares searching, not warming.
    profile = dataclasses.replace(base, grid=grid, exhaustive_warmup_s=base.warmup_s)
    values = mamf_grid(*grid)
    n_shapes = len(grid_shapes(values))
    scale = "full mamf-finder grid" if grid == base.grid and device.is_gpu else "CI-sized grid"
    threads = f", {args.threads} thread(s)" if device.kind == "cpu" else ""
    print(f"device: {device.name} ({device.kind}{threads}); dtype {args.dtype}")
    print(
        f"{scale}: m, n, k each {values[0]}..{values[-1]} step {grid[2]} ({n_shapes} shapes), "
        f"{profile.exhaustive.warmup}+{profile.exhaustive.iters} iterations per shape"
    )

    fp8 = (
        fp8_format(device, ident["capability"], ident["gcn_arch"])[0]
        if args.dtype == "fp8"
        else None
    )
    with float32_precision(args.dtype):
        bench = MatmulBench(device, args.dtype, fp8)
        t0 = time.perf_counter()
        full = search(
            bench, profile, exhaustive=True, budget_s=0.0, should_stop=lambda: False, report=None
        )
        t_full = time.perf_counter() - t0
        budget = args.budget or args.fraction * t_full
        t0 = time.perf_counter()
        quick = search(
            bench,
            profile,
            exhaustive=False,
            budget_s=budget,
            should_stop=lambda: False,
            report=None,
        )
        t_quick = time.perf_counter() - t0
        if full.best is None or quick.best is None or not full.best_shape or not quick.best_shape:
            print("bench_search: a search found no runnable shape", file=sys.stderr)
            return 1
        q_again, f_again = remeasure(
            bench, [quick.best_shape, full.best_shape], args.rounds, profile.confirm
        )

    print(
        f"exhaustive: {full.best.median_tflops:.4g} TFLOPS (median) at "
        f"{fmt_shape(full.best_shape)}, {full.shapes_tried} shapes in {t_full:.1f} s"
    )
    print(
        f"quick: {quick.best.median_tflops:.4g} TFLOPS (median) at {fmt_shape(quick.best_shape)}, "
        f"{quick.shapes_tried} shapes in {t_quick:.1f} s (budget {budget:.1f} s)"
    )
    reported = quick.best.median_tflops / full.best.median_tflops
    print(f"as reported by each search: ratio {reported:.3f}")
    print(
        f"re-measured alternately ({args.rounds} rounds): MAMF (fastest iteration) quick "
        f"{q_again.max_tflops:.4g}, exhaustive {f_again.max_tflops:.4g} TFLOPS; median quick "
        f"{q_again.median_tflops:.4g}, exhaustive {f_again.median_tflops:.4g} "
        f"(ratio {q_again.median_tflops / f_again.median_tflops:.3f})"
    )
    mamf_ratio = q_again.max_tflops / f_again.max_tflops
    print(f"mamf_ratio={mamf_ratio:.3f} time_ratio={t_quick / t_full:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
