"""The MAMF shape search against deterministic synthetic cost models and a fake clock."""

from __future__ import annotations

from probes.matmul import GPU_PROFILE, SMALL_PROFILE
from probes.search import (
    AdaptivePlan,
    adaptive_search,
    exhaustive_search,
    grid_shapes,
    mamf_grid,
    matmul_flops,
)
from probes.timing import Effort


def gpu_plan(budget_s: float) -> AdaptivePlan:
    p = GPU_PROFILE
    return AdaptivePlan(space=p.space, budget_s=budget_s, screen=p.screen, confirm=p.confirm)


def test_mamf_grid_matches_mamf_finder_ranges():
    # mamf-finder's `--m_range 0 16384 1024`: arange, with the 0 start replaced by the step.
    values = mamf_grid(0, 16384, 1024)
    assert values[0] == 1024 and values[-1] == 15360 and len(values) == 15
    assert len(grid_shapes(mamf_grid(*GPU_PROFILE.grid))) == 3375
    assert mamf_grid(0, 20480, 256)[-1] == 20224
    assert matmul_flops((2, 3, 4)) == 48


def test_adaptive_search_lands_on_the_known_best_shape(fake_device, bowl):
    dev = fake_device(bowl)
    result = adaptive_search(dev.measure, gpu_plan(60.0), clock=dev.clock)
    assert result.best_shape == (3072, 5120, 2048)
    assert result.best is not None and result.best.median_tflops == bowl((3072, 5120, 2048))
    assert result.mode == "quick" and not result.stopped


def test_quick_search_quality_and_cost_against_exhaustive_grid(fake_device, wave):
    full = fake_device(wave)
    grid = grid_shapes(mamf_grid(*GPU_PROFILE.grid))
    exhaustive = exhaustive_search(full.measure, grid, GPU_PROFILE.exhaustive, clock=full.clock)
    assert exhaustive.shapes_tried == 3375
    assert exhaustive.best is not None
    assert exhaustive.best.median_tflops == max(wave(s) for s in grid)

    quick = fake_device(wave)
    result = adaptive_search(quick.measure, gpu_plan(0.04 * full.now), clock=quick.clock)
    assert result.best is not None
    assert result.best.median_tflops >= 0.98 * exhaustive.best.median_tflops
    assert quick.now <= 0.05 * full.now


def test_budget_is_respected(fake_device, wave):
    dev = fake_device(wave)
    plan = gpu_plan(5.0)
    result = adaptive_search(dev.measure, plan, clock=dev.clock)
    # The finalists' confirmation is reserved up front; only estimation error can overrun.
    assert result.seconds <= plan.budget_s * 1.15
    assert result.shapes_tried > 20


def test_stop_flag_ends_the_search_between_measurements(fake_device, wave):
    dev = fake_device(wave)
    result = adaptive_search(
        dev.measure, gpu_plan(60.0), clock=dev.clock, should_stop=lambda: dev.calls >= 5
    )
    assert result.stopped and dev.calls == 5
    assert result.best is not None  # the partial search still reports its best so far


def test_unrunnable_shapes_are_skipped(fake_device, bowl):
    dev = fake_device(bowl)

    def measure(shape, effort):
        return None if shape[0] * shape[1] > 6144 * 6144 else dev.measure(shape, effort)

    result = adaptive_search(measure, gpu_plan(60.0), clock=dev.clock)
    assert result.unrunnable
    assert result.best_shape == (3072, 5120, 2048)


def test_nothing_runs_reports_no_best():
    plan = AdaptivePlan(SMALL_PROFILE.space, 1.0, Effort(0, 1), Effort(0, 1))
    result = adaptive_search(lambda s, e: None, plan)
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
    result = adaptive_search(dev.measure, gpu_plan(0.0), clock=dev.clock)
    assert result.best_shape == (16384, 16384, 16384)  # the largest coarse shape goes first
    assert dev.calls == 2  # screened, then confirmed
