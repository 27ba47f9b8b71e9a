"""Pilot tests for the back half: Performance, Verdict, export, resume, palette, screenshots."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
from textual.widgets import DataTable, Input

from advisor.tui.demo import settle
from advisor.tui.export import load_report, state_from_report
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.screens.export import ExportScreen
from advisor.tui.screens.performance import PerformanceScreen
from advisor.tui.screens.probes import ProbesScreen
from advisor.tui.screens.verdict import VerdictScreen

SIZE = (120, 40)
LAST = VerdictScreen.STEP


async def walk_to_verdict(app, pilot) -> None:
    """From Welcome on the GPU box: defaults, B200 + MI300X, a fake probe run, default
    configuration options."""
    await pilot.pause()
    for _ in range(5):
        await pilot.press("ctrl+n")
    assert isinstance(app.screen, ProbesScreen)
    await pilot.press("ctrl+r")
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("ctrl+n")
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, PerformanceScreen)
    await pilot.press("ctrl+n")
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, ConfigsScreen)
    await pilot.press("ctrl+n")
    await pilot.pause()
    assert isinstance(app.screen, VerdictScreen)


async def test_gpu_box_full_path_then_export(make_app, ready_state, tmp_path):
    state = ready_state(targets=["b200-sxm", "mi300x"], reached=0)
    app = make_app(state=state)
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_verdict(app, pilot)
        decision = app.state.decision
        assert decision is not None
        # MI300X needs a ROCm torch: the software gate left it out, the verdict says so.
        assert [t.gpu for t in decision.targets] == ["b200-sxm"]
        assert "mi300x" in app.state.excluded
        assert set(app.state.probes()) == {"h100-sxm"}
        assert decision.current.assumptions and decision.current.assumptions.probe
        await pilot.press("ctrl+e")
        assert isinstance(app.screen, ExportScreen)
        path_input = app.screen.query_one("#export-path", Input)
        assert path_input.value == str(tmp_path / "advisor-report.toml")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, VerdictScreen)
    written = tmp_path / "advisor-report.toml"
    assert app.exported == written and written.is_file()
    data = tomllib.loads(written.read_text(encoding="utf-8"))
    assert data["schema"] == "advisor.decision-report"
    assert load_report(written).decision == decision
    assert not list(tmp_path.glob(".advisor-report.toml.*")), "no temporary file left behind"


async def test_export_can_be_cancelled(make_app, ready_state, tmp_path):
    app = make_app(state=ready_state(probe_source="catalog", reached=LAST), start=LAST)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("ctrl+e")
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, VerdictScreen)
    assert not list(tmp_path.iterdir())


async def test_resume_shows_the_saved_verdict_without_recomputing(make_app, ready_state, tmp_path,
                                                                  catalog):
    from advisor.tui.export import export_report

    app = make_app(state=ready_state(probe_source="catalog", quotes={"b200-sxm": 4.25},
                                     reached=LAST), start=PerformanceScreen.STEP)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        decision = app.state.decision
        assert decision is not None
        path = export_report(decision, catalog, {}, tmp_path / "r.toml")
    resumed = state_from_report(load_report(path))
    assert resumed.quotes == {"b200-sxm": 4.25} and resumed.targets == ["b200-sxm"]
    saved = resumed.decision
    app = make_app(state=resumed, start=LAST)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, VerdictScreen)
        assert app.state.decision is saved, "the report's decision, not a new one"
        text = str(app.screen.query_one("#verdict-summary").render())
        assert "b200-sxm" in text
        # Going back and changing an answer makes a fresh decision.
        await pilot.press("escape")
        assert isinstance(app.screen, ConfigsScreen)
        assert app.state.decision is saved
        app.state.quotes["b200-sxm"] = 3.0
        await pilot.press("ctrl+n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.decision is not saved
        assert app.state.decision is not None
        assert app.state.decision.answers.prices["b200-sxm"] == 3.0


async def test_performance_table_has_a_row_per_gpu_and_seq_len(make_app, ready_state):
    state = ready_state(probe_source="catalog", targets=["b200-sxm", "h200-sxm"],
                        workload={"seq_lens": (2048, 4096, 8192)})
    app = make_app(state=state, start=PerformanceScreen.STEP)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.query_one("#sweep", DataTable).row_count == 3 * 3
        assert "Speedup" in str(app.screen.query_one("#chart").render())


async def test_unprojectable_answers_say_so(make_app, ready_state):
    state = ready_state(targets=["v100-sxm2"], workload={"precision": "fp8"}, reached=LAST)
    app = make_app(state=state, start=PerformanceScreen.STEP)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "Cannot project" in str(app.screen.query_one("#compute-error").render())
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, PerformanceScreen)


async def test_palette_commands_and_screenshot(make_app, ready_state, tmp_path):
    app = make_app(state=ready_state(probe_source="catalog", reached=LAST), start=LAST)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Export report (TOML)" in titles and "Save screenshot (SVG)" in titles
        assert "Theme" in titles and "Screenshot" not in titles
        assert "Go to step 3: Targets and prices" in titles
        jump = next(c for c in app.get_system_commands(app.screen) if c.title.startswith(
            "Go to step 3"))
        jump.callback()
        await pilot.pause()
        assert app.step == 2
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert len(list(tmp_path.glob("*.svg"))) == 1


def test_startup_imports_neither_torch_nor_numpy():
    """Nor the later steps' screens and the engine's answer models: they load after the
    first paint (built ahead, or on the first visit)."""
    later = ("advisor.tui.screens.workload", "advisor.tui.screens.configs",
             "advisor.tui.gating", "advisor.core.model.answers")
    code = ("import sys, advisor.cli, advisor.tui.app; advisor.cli.build_parser(); "
            f"print(sorted(m for m in ('torch', 'numpy', 'textual', *{later!r}) "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['textual']"
    code = "import sys, advisor.cli; advisor.cli.build_parser(); print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False", "`advisor --help` must not import textual"


def test_resume_of_a_missing_report_is_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "advisor", "--resume", str(tmp_path / "no.toml")],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "no terminal" in out.stderr


def test_run_app_refuses_a_bad_report_before_taking_the_screen(tmp_path):
    from advisor.core.errors import InputError
    from advisor.tui.app import run_app

    bad = tmp_path / "r.toml"
    bad.write_text('schema = "something-else"\n', encoding="utf-8")
    with pytest.raises(InputError, match="not an advisor decision report"):
        run_app(resume=bad)


async def test_hardware_is_detected_after_first_paint(make_app, monkeypatch, gpu_box):
    import advisor.tui.app as app_module

    monkeypatch.setattr(app_module, "detect_hardware", lambda catalog: gpu_box)
    app = make_app()
    app.ctx.hardware = app_module.Hardware(pending=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.ctx.hardware is gpu_box
        assert app.state.current == "h100-sxm"
        assert "8 × NVIDIA H100" in str(app.screen.query_one("#box").render())


async def test_import_a_probe_record_from_another_box(make_app, ready_state, tmp_path):
    from advisor.tui.runner import FakeProbeRunner

    record = FakeProbeRunner(device="NVIDIA B200").run("quick", lambda _: None, lambda: False)
    path = tmp_path / "b200.json"
    path.write_text(record.model_dump_json(by_alias=True), encoding="utf-8")
    app = make_app(state=ready_state(), start=5)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("down", "down", "down", "enter")
        assert app.screen.choice == "import"
        field = app.screen.query_one("#record-path", Input)
        field.focus()
        await pilot.press(*str(tmp_path / "missing.json"), "enter")
        assert "cannot read" in str(app.screen.query_one("#probe-message").render())
        field.value = str(path)
        await pilot.press("enter")
        assert app.state.probe_source == "import"
        assert app.state.probe_record == record
        assert app.screen.query_one("#probe-results", DataTable).row_count == 5


async def test_resume_keeps_what_the_form_does_not_show(make_app, catalog, tmp_path):
    """A report made by the CLI carries fields the wizard has no control for; editing one
    answer in the wizard must not drop them (nor the answers' time premium)."""
    from advisor.core.decide import decide
    from advisor.core.model.answers import Answers
    from advisor.core.model.workload import Workload
    from advisor.core.report.document import build_report, report_to_toml
    from advisor.tui.export import provenance
    from advisor.tui.screens.workload import WorkloadScreen

    workload = Workload(model="mixtral-8x7b", seq_lens=[4096, 8192], gpus=16, nodes=2, pp=2,
                        cp=2, ep=2, global_batch=32, optimizer="adamw8bit", fused_kernels=True,
                        packed_doc_len=1024, zero_stage=1, token_budget=2e11)
    answers = Answers(current="h100-sxm", targets=["b200-sxm"], workload=workload,
                      time_premium=0.25)
    path = tmp_path / "cli.toml"
    path.write_text(report_to_toml(build_report(decide(answers, catalog, {}), catalog, {},
                                                provenance())), encoding="utf-8")
    app = make_app(state=state_from_report(load_report(path)), start=LAST)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        saved = app.state.decision
        jump = next(c for c in app.get_system_commands(app.screen)
                    if c.title == "Go to step 2: Workload")
        jump.callback()
        await pilot.pause()
        assert isinstance(app.screen, WorkloadScreen)
        kept = str(app.screen.query_one("#kept").render())
        assert "global batch 32" in kept and "pp 2" in kept and "fused kernels" in kept
        field = app.screen.query_one("#micro_batch", Input)
        field.focus()
        field.value = ""
        await pilot.press("2")
        assert field.value == "2", app.focused
        while not isinstance(app.screen, PerformanceScreen):
            await pilot.press("ctrl+n")
            await pilot.pause()
        await settle(pilot)
        decision = app.state.decision
        assert decision is not None and decision is not saved
        assert decision.answers.time_premium == 0.25
        assert decision.answers.workload == workload.model_copy(update={"micro_batch": 2})


async def test_break_even_card_says_each_thing_once(make_app, ready_state):
    """A small saving inside a band that straddles a tie: the badge says break-even, the
    headline gives the band once, and the tie price is one sensitivity line."""
    state = ready_state(probe_source="catalog", targets=["b200-sxm"], quotes={"b200-sxm": 2.8},
                        reached=LAST)
    app = make_app(state=state, start=LAST)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        decision = app.state.decision
        assert decision is not None
        verdict = decision.targets[0].verdict
        assert verdict is not None and verdict.kind == "break-even"
        assert "BREAK-EVEN" in str(app.screen.query_one("#verdict-summary").render())
        text = str(app.screen.query_one(".verdict-card").render())
        band = f"{verdict.cost_ratio_low:.2f}-{verdict.cost_ratio_high:.2f}x"
        assert text.count("BREAK-EVEN") == 1 and "break-even:" not in text
        assert text.count(band) == 1, "the band is in the headline, not again as a warning"
        assert text.count("ties at $") == 1 and "break-even price" not in text
