"""The MAMF shape search against deterministic synthetic cost models and a fake clock."""

from __future__ import annotations

import pytest

from probes.bench_search import BENCH_GPU_EXHAUSTIVE, BENCH_GPU_SPACE
from probes.matmul import GPU_PROFILE, SMALL_PROFILE
from probes.search import (
    AdaptivePlan,
    SearchSpace,
    adaptive_search,
    coarse_indices,
    exhaustive_search,
    grid_shapes,
    mamf_grid,
    matmul_flops,
)
from probes.timing import Effort


def plan(space: SearchSpace, budget_s: float = 1e9, **kw) -> AdaptivePlan:
    p = GPU_PROFILE
    return AdaptivePlan(
        space=space, budget_s=budget_s, screen=p.screen, coarse_per_dim=p.coarse_per_dim, **kw
    )


def test_one_declared_space_covers_k_above_16384_on_gpus():
    space = GPU_PROFILE.space
    assert space.values(2)[-1] == 20480 and 20480 in space.values(0)
    assert len(space) == 8000 and len(space.shapes()) == 8000
    assert (1536, 2816, 20480) not in space and (2048, 3072, 20480) in space
    assert space.describe() == "M, N, K each 1024..20480 step 1024 (8000 shapes)"
    assert len(BENCH_GPU_SPACE) == 1000 and BENCH_GPU_SPACE.values(2)[-1] == 20480
    assert len(SMALL_PROFILE.space) == 512
    # mamf-finder's `--m_range 0 16384 1024`: arange, with the 0 start replaced by the step.
    assert mamf_grid(0, 16384, 1024)[-1] == 15360
    assert SearchSpace.from_range(0, 16384, 1024) == SearchSpace(1024, 15360, 1024)
    assert len(grid_shapes([1, 2])) == 8 and matmul_flops((2, 3, 4)) == 48
    with pytest.raises(ValueError):
        SearchSpace(0, 10, 1)


def test_coarse_values_spread_over_the_whole_range():
    assert coarse_indices(20, 4) == [19, 13, 7, 1]
    assert coarse_indices(10, 3) == [9, 5, 1]
    assert coarse_indices(2, 4) == [1, 0]


def test_adaptive_search_lands_on_the_known_best_shape(fake_device, bowl):
    dev = fake_device(bowl)
    result = adaptive_search(dev.measure, plan(GPU_PROFILE.space), clock=dev.clock)
    assert result.best_shape == (3072, 5120, 2048)
    assert result.best is not None and result.best.median_tflops == bowl((3072, 5120, 2048))
    assert result.mode == "quick" and result.stopped_by == "converged" and not result.stopped


@pytest.mark.parametrize("model", ["power", "rugged", "wave"])
@pytest.mark.parametrize("space", [GPU_PROFILE.space, BENCH_GPU_SPACE], ids=["suite", "bench"])
def test_quick_reaches_98_percent_of_exhaustive_in_5_percent_of_its_time(
    fake_device, models, model, space
):
    """The design target, on wave-quantisation models of a 132-SM GPU (peak in a corner,
    peak inside, jagged): the quick search stops by itself (converged), so its time is
    measured, not set by a budget. The efforts are the GPU ones bench_search uses."""
    fn = models[model]
    full = fake_device(fn)
    exhaustive = exhaustive_search(
        full.measure, space.shapes(), BENCH_GPU_EXHAUSTIVE, clock=full.clock
    )
    assert exhaustive.shapes_tried == len(space)
    assert exhaustive.best is not None
    assert exhaustive.best.median_tflops == max(fn(s) for s in space.shapes())

    quick = fake_device(fn)
    result = adaptive_search(quick.measure, plan(space), clock=quick.clock)
    assert result.stopped_by == "converged"
    assert result.best is not None and result.best_shape in space
    assert result.best.median_tflops >= 0.98 * exhaustive.best.median_tflops
    assert quick.now <= 0.05 * full.now


def test_every_shape_the_quick_search_measures_is_in_the_space(fake_device, wave):
    space = SearchSpace(256, 4096, 256, k_lo=1024, k_hi=8192, k_step=1024)
    seen = []
    dev = fake_device(wave)

    def measure(shape, effort):
        seen.append(shape)
        return dev.measure(shape, effort)

    adaptive_search(measure, plan(space), clock=dev.clock)
    assert seen and all(s in space for s in seen)
    assert len(seen) == len(set(seen))  # each shape measured once


def test_the_time_budget_is_a_cap(fake_device, wave):
    dev = fake_device(wave)
    result = adaptive_search(dev.measure, plan(GPU_PROFILE.space, 2.0), clock=dev.clock)
    assert result.stopped_by == "budget" and not result.stopped
    # Only the shape in flight can overrun the cap.
    assert result.seconds <= 2.0 + max(dev.costs)


def test_a_fixed_shape_budget_is_deterministic(fake_device, wave):
    dev = fake_device(wave)
    result = adaptive_search(dev.measure, plan(GPU_PROFILE.space, max_shapes=7), clock=dev.clock)
    assert result.shapes_tried == 7 and dev.calls == 7 and result.stopped_by == "shape budget"


def test_stop_flag_ends_the_search_between_measurements(fake_device, wave):
    dev = fake_device(wave)
    result = adaptive_search(
        dev.measure, plan(GPU_PROFILE.space), clock=dev.clock, should_stop=lambda: dev.calls >= 5
    )
    assert result.stopped and result.stopped_by == "stop" and dev.calls == 5
    assert result.best is not None  # the partial search still reports its best so far


def test_unrunnable_shapes_are_skipped(fake_device, bowl):
    dev = fake_device(bowl)

    def measure(shape, effort):
        return None if shape[0] * shape[1] > 6144 * 6144 else dev.measure(shape, effort)

    result = adaptive_search(measure, plan(GPU_PROFILE.space), clock=dev.clock)
    assert result.unrunnable
    assert result.best_shape == (3072, 5120, 2048)


def test_nothing_runs_reports_no_best():
    p = AdaptivePlan(SMALL_PROFILE.space, 1.0, Effort(0, 1))
    result = adaptive_search(lambda s, e: None, p)
    assert result.best is None and result.best_shape is None and result.shapes_tried > 0


def test_exhaustive_reports_progress_and_stops(fake_device, wave):
    dev = fake_device(wave)
    seen = []
    result = exhaustive_search(
        dev.measure,
        grid_shapes([256, 512]),
        Effort(1, 2),
        clock=dev.clock,
        report=lambda f, msg: seen.append((f, msg)),
        should_stop=lambda: len(seen) >= 3,
    )
    assert result.stopped and result.shapes_tried == 3
    assert [round(f, 3) for f, _ in seen] == [0.125, 0.25, 0.375]
    assert "TFLOPS" in seen[0][1] and "best" in seen[0][1]


def test_a_zero_budget_still_measures_one_shape(fake_device, wave):
    dev = fake_device(wave)
    result = adaptive_search(dev.measure, plan(GPU_PROFILE.space, 0.0), clock=dev.clock)
    assert result.best_shape == (20480, 20480, 20480)  # the largest coarse shape goes first
    assert dev.calls == 1 and result.stopped_by == "budget"


def test_finalists_are_the_best_screened_shapes(fake_device, bowl):
    dev = fake_device(bowl)
    result = adaptive_search(dev.measure, plan(GPU_PROFILE.space), clock=dev.clock)
    top = result.finalists(3)
    values = [bowl(s) for s in top]
    assert values == sorted(values, reverse=True) and top[0] == (3072, 5120, 2048)
