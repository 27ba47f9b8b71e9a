"""The suite runner on the CPU: a valid record, progress, cancellation, Ctrl-C, failures."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading

import pytest

import probes.runner as runner_mod
from advisor.core.model.probe_record import parse_probe_record
from probes.device import Device
from probes.plan import SuiteConfig, plan_suite
from probes.runner import run_suite


def test_suite_on_cpu_writes_an_honest_record(tiny_config):
    events, checkpoints = [], []
    record = run_suite(tiny_config, progress=events.append, checkpoint=checkpoints.append)
    parsed = parse_probe_record(record, "run")  # the decision engine's mirror accepts it
    assert parsed.complete and not parsed.interrupted
    dev = parsed.stamp.device
    assert dev.kind == "cpu" and dev.count == 1 and dev.catalog_id is None
    assert dev.catalog_note == "no catalog figure for CPU"
    assert parsed.stamp.versions.torch and parsed.stamp.versions.python
    assert parsed.stamp.date.endswith("+00:00")
    assert parsed.mamf("bf16") is not None and parsed.mamf("fp8") is None
    assert parsed.attention_tflops(64, 32, True, "fwd_bwd") is not None
    assert parsed.d2d_gbps() is not None
    assert parsed.node_health is not None and parsed.node_health.status == "skipped"
    assert "CPU run" in (parsed.node_health.reason or "")
    assert "matmul_flops" in parsed.conventions and parsed.settings["preset"] == "quick"
    assert parsed.version == 2 and parsed.stamp.probe is not None
    assert parsed.stamp.run["mode"] == "quick" and parsed.stamp.run["toy_sizes"] is True
    assert parsed.stamp.host["llc_bytes"] > 0
    assert any("toy sizes" in n for n in parsed.notes)  # the CPU run says so
    assert [(s.name, s.status) for s in parsed.stages] == [
        ("matmul bf16", "done"), ("attention", "done"), ("bandwidth", "done")
    ]
    assert all(s.estimate_s and s.seconds is not None for s in parsed.stages)
    assert parsed.stages_finished == ["matmul bf16", "attention", "bandwidth"]
    assert parsed.attention_kernels() == ["sdpa-flash", "sdpa-math"]
    assert all(a.kernel for a in parsed.attention)
    fractions = [e.fraction for e in events]
    assert fractions == sorted(fractions) and events[-1].stage == "done" and fractions[-1] == 1.0
    assert events[0].stage == "plan" and "toy sizes" in events[0].message
    assert len(checkpoints) == 3  # after matmul, attention and bandwidth


def test_a_probe_that_cannot_run_is_recorded_and_the_run_carries_on(tiny_config):
    config = dataclasses.replace(tiny_config, dtypes=("fp8", "bf16"), only=("matmul",))
    record = run_suite(config)
    fp8, bf16 = record["matmul"]
    assert fp8["status"] == "skipped" and "fp8" in fp8["reason"]
    assert bf16["status"] == "ok" and record["complete"]
    assert record["attention"] == [] and record["bandwidth"] == []


def test_a_crashing_stage_is_noted(tiny_config, monkeypatch):
    def crash(*args, **kwargs):
        raise AssertionError("bug in the attention probe")

    monkeypatch.setattr(runner_mod, "run_attention", crash)
    record = run_suite(dataclasses.replace(tiny_config, only=("attention", "bandwidth")))
    assert record["notes"][-1] == "attention failed: AssertionError: bug in the attention probe"
    assert [s["status"] for s in record["stages"]] == ["failed", "done"]
    assert record["bandwidth"] and record["complete"]


def test_stop_flag_keeps_the_partial_record(tiny_config):
    stop = threading.Event()

    def progress(event):
        if event.stage == "attention":
            stop.set()

    record = run_suite(tiny_config, progress=progress, stop=stop)
    assert record["interrupted"] and not record["complete"]
    assert record["matmul"][0]["status"] == "ok"
    assert len(record["attention"]) == 1  # checked between measurements
    assert record["bandwidth"] == []
    assert [s["status"] for s in record["stages"]] == ["done", "stopped", "not run"]
    assert record["stages_finished"] == ["matmul bf16"]
    parse_probe_record(record, "partial")


def test_ctrl_c_stops_after_the_current_measurement(tiny_config):
    sent = []

    def progress(event):
        if event.stage.startswith("matmul") and not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)

    before = signal.getsignal(signal.SIGINT)
    record = run_suite(tiny_config, progress=progress)
    assert signal.getsignal(signal.SIGINT) is before  # handler restored
    assert record["interrupted"] and not record["complete"]
    assert record["matmul"] and record["matmul"][0]["status"] in ("ok", "skipped")
    assert record["attention"] == []


def test_second_ctrl_c_interrupts_at_once(tiny_config):
    def progress(event):
        if event.stage.startswith("matmul"):
            os.kill(os.getpid(), signal.SIGINT)  # asks to stop after this measurement
            os.kill(os.getpid(), signal.SIGINT)  # raises KeyboardInterrupt right here

    record = run_suite(tiny_config, progress=progress)
    assert record["interrupted"] and not record["complete"]
    assert record["matmul"] == []  # the measurement in flight is abandoned, the record kept
    assert record["node_health"] is not None  # finishing touches still ran
    assert [s["status"] for s in record["stages"]] == ["stopped", "not run", "not run"]


def test_ctrl_c_after_the_last_measurement_leaves_a_complete_record(tiny_config):
    sent = []

    def progress(event):
        if event.stage == "bandwidth" and event.message.startswith("d2h") and not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)  # nothing is left to cut short

    record = run_suite(dataclasses.replace(tiny_config, only=("bandwidth",)), progress=progress)
    assert sent and record["complete"] and not record["interrupted"]
    assert record["stages_finished"] == ["bandwidth"]


def test_default_gpu_plan_fits_the_suite_time_budget():
    h100 = Device("cuda", "NVIDIA H100 80GB HBM3", 1)
    plan = plan_suite(SuiteConfig(), h100)
    assert plan.dtypes == ("bf16", "fp8") and not plan.exhaustive
    assert plan.attention is not None and len(plan.attention.seq_lens) == 4
    assert plan.run_bandwidth and not plan.health
    assert plan.estimate_s(h100) <= 90
    assert set(plan.estimates(h100)) == {"matmul bf16", "matmul fp8", "attention", "bandwidth"}
    node = dataclasses.replace(h100, count=8)
    assert plan_suite(SuiteConfig(), node).health  # multi-GPU nodes always check the spread
    assert plan_suite(SuiteConfig(), node).estimate_s(node) <= 90
    assert plan_suite(SuiteConfig(preset="quick"), h100).estimate_s(h100) <= 30


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (SuiteConfig(preset="huge"), "unknown preset"),
        (SuiteConfig(only=("matmul", "vibes")), "unknown probe 'vibes'"),
        (SuiteConfig(dtypes=("int4",)), "unknown dtype 'int4'"),
        (SuiteConfig(gqa_ratio=3), "GQA ratio 3"),
        (SuiteConfig(budget_s=-1.0), "--budget"),
        (SuiteConfig(gqa_ratio=0), "--gqa-ratio"),
    ],
)
def test_bad_configs_fail_before_anything_runs(config, message):
    with pytest.raises(ValueError, match=message):
        plan_suite(config, Device("cpu", "x", 1))


def test_estimates_are_the_stage_budgets_and_skipped_dtypes_cost_nothing():
    cpu = Device("cpu", "x", 1)
    plan = dataclasses.replace(
        plan_suite(SuiteConfig(), cpu), skip_dtypes={"fp8": "no fp8 units on CPU"}
    )
    est = plan.estimates(cpu)
    assert est["matmul fp8"] < 0.1 <= est["matmul bf16"]
    assert est["attention"] >= plan.attention.budget_s  # type: ignore[union-attr]
    assert plan.toy and plan.run_settings()["toy_sizes"] is True
