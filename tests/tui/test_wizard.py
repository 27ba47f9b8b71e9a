"""Pilot tests for the front half: Welcome, Workload, Targets, the gates; and the paths
through the whole wizard. Keys are pressed as a user would; assertions are on the state,
the answers handed to the engine, and what the screen says."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.widgets import DataTable, Input, Select

from advisor.tui.demo import settle
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.screens.gates import DtypeScreen, SoftwareScreen
from advisor.tui.screens.help import HelpScreen
from advisor.tui.screens.performance import PerformanceScreen
from advisor.tui.screens.probes import ProbesScreen
from advisor.tui.screens.quit import QuitScreen
from advisor.tui.screens.targets import TargetsScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.screens.welcome import WelcomeScreen
from advisor.tui.screens.workload import WorkloadScreen
from advisor.tui.widgets.field import FormField

from .conftest import NARROW, WIDE, open_advanced, retype, table_text, text_of


async def test_cpu_only_box_from_welcome_to_verdict(make_app, cpu_box):
    app = make_app(hardware=cpu_box)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WelcomeScreen)
        assert "none detected" in text_of(app.screen.query_one("#box"))
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, WelcomeScreen), "Next is blocked until a GPU is chosen"
        await pilot.press(*"h100", "enter")
        assert app.state.current == "h100-sxm"
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, WorkloadScreen)
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, TargetsScreen)
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, TargetsScreen), "Next is blocked until a target is added"
        await pilot.press(*"b200", "enter")
        assert app.state.targets == ("b200-sxm",)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, DtypeScreen)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, SoftwareScreen)
        # A CPU box's torch is not the GPU job's: no stack, so the gate is not checked...
        report = app.report
        assert report is not None and report.decision.answers.stack is None
        assert "not checked" in table_text(app.screen.query_one("#gate", DataTable))
        # ...until the user types the stack the GPU job runs on.
        await retype(pilot, app.screen.query_one("#stack", Input),
                     "torch==2.7.1+cu128 flash-attn==2.8.3")
        report = app.report
        assert report is not None and report.decision.answers.stack == app.state.stack
        assert report.decision.targets[0].software_gate is not None
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, ProbesScreen)
        assert app.state.probe_choice is None or app.screen.choice == "none"
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, PerformanceScreen)
        shown = app.report
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, ConfigsScreen)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, VerdictScreen)
        assert app.report is shown, "one Report for Performance, Configurations and Verdict"


async def test_gpu_box_preselects_detected_gpu_and_uses_its_stack(make_app):
    app = make_app()
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert app.state.current == "h100-sxm"
        text = text_of(app.screen.query_one("#box"))
        assert "8x NVIDIA H100 80GB HBM3" in text and "575.57.08" in text
        assert app.state.job_stack(app.ctx.hardware) is app.ctx.hardware.stack


SEARCH = st.text(alphabet="abcdhgrtx0123456789 -", min_size=1, max_size=10)


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(typed=SEARCH)
async def test_typing_in_a_table_never_changes_the_selection(make_app, ready_state, typed):
    """Welcome and Targets: whatever is typed (spaces included) only searches."""
    app = make_app(state=ready_state(targets=["b200-sxm"]), start=2)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        app.screen.query_one("#gpus", DataTable).focus()
        await pilot.press(*[("space" if c == " " else c) for c in typed])
        await settle(pilot)
        assert app.state.targets == ("b200-sxm",) and app.state.current == "h100-sxm"
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, WelcomeScreen)
        app.screen.query_one("#gpus", DataTable).focus()
        await pilot.press(*[("space" if c == " " else c) for c in typed])
        await settle(pilot)
        assert app.state.current == "h100-sxm"


async def test_a_space_is_part_of_the_search_and_enter_selects(make_app, ready_state, shipped):
    app = make_app(state=ready_state(targets=[]), start=2, with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await pilot.press(*"rtx", "space", *"pro")
        await settle(pilot)
        assert app.screen.query_one("#search", Input).value == "rtx pro"
        assert app.state.targets == ()
        rows = [k.value for k in app.screen.query_one("#gpus", DataTable).rows]
        assert rows and all(r.startswith("rtx-pro") for r in rows)
        await pilot.press("enter")
        assert app.state.targets == (rows[0],)


async def test_workload_defaults_are_core_s_and_marked(make_app, ready_state):
    from advisor.core import Workload

    app = make_app(state=ready_state(), start=1)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert not screen.query("#zero_stage"), "Advanced is built when first opened"
        await open_advanced(pilot)
        assert set(app.state.given) == {"model", "seq_lens"}, "nothing typed, nothing given"
        gpus = screen.query_one("#gpus", Input)
        assert gpus.value == "" and gpus.placeholder == \
            f"{Workload.model_fields['gpus'].default} (default)"
        zero = screen.query_one("#zero_stage", Select)
        assert zero.value is Select.NULL and "ZeRO-0" in zero.prompt
        note = text_of(screen.query_one("#f-zero_stage").query_one(".field-note"))
        assert "default" in note and "re-tuned" in note, "the preview's re-tuned layout"
        assert "example value" in text_of(screen.query_one("#f-seq_lens").query_one(
            ".field-note"))
        await retype(pilot, gpus, "16")
        assert app.state.given["gpus"] == 16
        assert "default" not in text_of(screen.query_one("#f-gpus").query_one(".field-note"))
        await retype(pilot, gpus, "")
        assert "gpus" not in app.state.given, "cleared: the default applies again"


async def test_bad_numbers_are_refused_not_changed(make_app, ready_state):
    app = make_app(state=ready_state(), start=1)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        gpus = app.screen.query_one("#gpus", Input)
        await retype(pilot, gpus, "4.5")
        row = app.screen.query_one("#f-gpus", FormField)
        assert gpus.value == "4.5" and row.has_class("-invalid")
        assert "whole number" in text_of(row.query_one(".field-note"))
        with pytest.raises(ValueError, match="fix GPUs on Workload first"):
            app.answers()  # the 4 typed on the way to 4.5 is not used behind the error
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, WorkloadScreen), "Next is blocked while a field is invalid"
        await retype(pilot, gpus, "1e3")
        assert app.state.given["gpus"] == 1000
        budget = app.screen.query_one("#token_budget", Input)
        await retype(pilot, budget, "1.5B")
        assert app.state.given["token_budget"] == 1.5e9
        assert "1,500,000,000" in text_of(app.screen.query_one("#f-token_budget").query_one(
            ".field-note"))
        seq = app.screen.query_one("#seq_lens", Input)
        await retype(pilot, seq, "8k, 9x")
        assert "9x" in text_of(app.screen.query_one("#f-seq_lens").query_one(".field-note"))
        await retype(pilot, seq, "8k, 32k")
        assert app.state.given["seq_lens"] == (8192, 32768)


async def test_cross_field_rules_are_the_engine_s(make_app, ready_state):
    app = make_app(state=ready_state(), start=1)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await open_advanced(pilot)
        await retype(pilot, app.screen.query_one("#tp", Input), "3")
        hint = text_of(app.screen.query_one("#hint"))
        assert "TP x PP x CP" in hint and "gpus 16" not in hint
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, WorkloadScreen)


async def test_serving_fields_are_where_a_serving_user_looks(make_app, ready_state):
    """TP/PP/EP, the engine, the KV format, requests in flight and the latency limits (with
    their units) are on the form itself, not under Advanced."""
    app = make_app(state=ready_state(), start=1)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.query_one("#advanced").collapsed
        screen.query_one("#mode", Select).value = "serve"
        await settle(pilot)
        labels = {}
        for key in ("osl", "kv_dtype", "ttft_ms", "tpot_ms", "max_batch", "micro_batch",
                    "framework", "tp", "pp", "ep"):
            row = screen.query_one(f"#f-{key}", FormField)
            assert row.display and row.parent is screen.query_one("#form"), key
            labels[key] = row.label
        assert labels["ttft_ms"] == "TTFT limit (ms)" and labels["tpot_ms"] == "TPOT limit (ms)"
        assert labels["micro_batch"] == "requests in flight"
        assert labels["framework"] == "serving engine"
        engines = [v for _, v in screen.query_one("#framework", Select)._options]
        assert "vllm" in engines and "megatron" not in engines
        await open_advanced(pilot)
        for key in ("zero_stage", "optimizer", "global_batch", "recompute"):
            assert not screen.query_one(f"#f-{key}").display, key
        assert screen.query_one("#f-seq_lens", FormField).label == "input tokens (ISL)"
        assert screen.query_one("#f-osl", FormField).label == "output tokens (OSL)"
        assert "output tokens" in text_of(screen.query_one("#hint"))
        await retype(pilot, screen.query_one("#osl", Input), "512")
        await retype(pilot, screen.query_one("#tpot_ms", Input), "50")
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, TargetsScreen)
        answers = app.answers()
        assert answers.workload.mode == "serve" and answers.workload.osl == 512
        assert answers.workload.tpot_ms == 50


async def test_prices_ratio_counts_and_refusals(make_app, ready_state):
    app = make_app(state=ready_state(targets=["b200-sxm"]), start=2)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        screen = app.screen
        await retype(pilot, screen.query_one("#price-h100-sxm", Input), "1")
        await retype(pilot, screen.query_one("#price-b200-sxm", Input), "3.4x")
        note = text_of(screen.query(".price-note").last())
        assert "$3.40/h" in note
        await retype(pilot, screen.query_one("#count-b200-sxm", Input), "4")
        answers = app.answers()
        assert answers.prices == {"h100-sxm": 1.0, "b200-sxm": 3.4}
        assert answers.targets == ["b200-sxm@4"]
        await retype(pilot, screen.query_one("#price-b200-sxm", Input), "2,5")
        assert "comma" in text_of(screen.query(".price-note").last())
        with pytest.raises(ValueError, match="the price of b200-sxm"):
            app.answers()  # not the 2 typed on the way to "2,5"
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, TargetsScreen)
        await retype(pilot, screen.query_one("#electricity", Input), "0.2")
        assert app.state.electricity_usd_per_kwh == 0.2


async def test_a_gated_target_stays_blocked_with_its_remedy(make_app, ready_state):
    state = ready_state(targets=["b200-sxm", "v100-sxm2", "mi300x"], given={"precision": "fp8"})
    app = make_app(state=state, start=3)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        report = app.report
        assert report is not None
        kinds = {t.gpu: t.verdict.kind for t in report.decision.targets if t.verdict}
        assert kinds["v100-sxm2"] == "blocked-by-gate", "kept in the decision, blocked"
        table = app.screen.query_one("#gate", DataTable)
        assert table.row_count == 4
        assert "blocked" in str(table.get_row("v100-sxm2")[2])
        await pilot.press("down", "down")
        assert "stays in the decision" in text_of(app.screen.query_one("#detail-text"))
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, SoftwareScreen), "a blocked target does not stop the user"
        await pilot.press("down", "down", "down")
        detail = text_of(app.screen.query_one("#detail-text"))
        assert "remedy" in detail and "rocm" in detail.lower()


async def test_every_declared_package_is_checked_or_said_to_have_no_data(make_app, ready_state):
    app = make_app(state=ready_state(targets=["b200-sxm"]), start=4)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await retype(pilot, app.screen.query_one("#stack", Input),
                     "torch==2.7.1+cu128 transformer-engine==2.8.0 my-kernels==1.0")
        report = app.report
        assert report is not None
        gate = report.decision.targets[0].software_gate
        assert gate is not None
        assert {f.package for f in gate.findings} == {"torch", "transformer-engine", "my-kernels"}
        await pilot.press("down")
        detail = text_of(app.screen.query_one("#detail-text"))
        assert "my-kernels" in detail and "not checked" in detail and "no support data" in detail


async def test_back_keeps_answers_and_revisits_redraw(make_app, ready_state):
    app = make_app(state=ready_state(targets=["b200-sxm", "v100-sxm2"]), start=3)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        dtype_screen = app.screen
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, WorkloadScreen)
        app.screen.query_one("#precision", Select).value = "fp8"
        await settle(pilot)
        await pilot.press("escape")
        assert isinstance(app.screen, WelcomeScreen)
        await pilot.press(*"h200", "enter")
        assert app.state.current == "h200-sxm"
        await pilot.press("ctrl+n", "ctrl+n")
        assert isinstance(app.screen, TargetsScreen)
        assert app.screen.query_one("#price-h200-sxm", Input)
        assert not app.screen.query("#price-h100-sxm")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert app.screen is dtype_screen, "the same screen object, redrawn"
        assert "fp8" in text_of(app.screen.query_one("#gate-question"))
        assert app.screen.query_one("#gate", DataTable).get_row("h200-sxm")


async def test_ctrl_q_quits_and_f1_helps_from_any_step(make_app, ready_state):
    for step in range(9):
        app = make_app(state=ready_state(reached=8), start=step)
        async with app.run_test(size=NARROW) as pilot:
            await settle(pilot)
            await pilot.press("f1")
            assert isinstance(app.screen, HelpScreen)
            assert "MAMF" in text_of(app.screen.query_one("#help-text"))
            await pilot.press("escape")
            assert not isinstance(app.screen, HelpScreen)
            await pilot.press("ctrl+q")  # the answers are not saved: it asks once
            assert isinstance(app.screen, QuitScreen)
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert app.return_code == 0


async def test_question_mark_helps_but_types_into_fields(make_app, ready_state):
    app = make_app(state=ready_state(), start=2)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen), "? on a table opens the help"
        await pilot.press("escape")
        field = app.screen.query_one("#electricity", Input)
        field.focus()
        await pilot.press("question_mark")
        assert field.value == "?" and not isinstance(app.screen, HelpScreen)


def test_each_step_has_its_screen():
    from advisor.tui.app import SCREENS, screen_class
    from advisor.tui.state import STEPS

    assert len(SCREENS) == len(STEPS)
    assert [screen_class(i).STEP for i in range(len(STEPS))] == list(range(len(STEPS)))


async def test_catalog_table_fits_80_columns(make_app, shipped):
    """Without room for names, the longest ids are clipped so the price column still shows."""
    app = make_app(with_catalog=shipped)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#gpus", DataTable)
        used = sum(c.get_render_width(table) for c in table.columns.values())
        assert "name" not in [c.key.value for c in table.columns.values()]
        assert used <= table.scrollable_content_region.width


async def test_a_gpt_style_custom_model_with_a_plain_mlp(make_app, ready_state, tmp_path):
    """A 13B GELU GPT (40 layers, 5120 hidden, 40 heads, 20480 FFN): the parameter count
    follows the dimensions and the MLP kind as they are typed, and the plain MLP is in the
    answers the wizard saves."""
    import tomllib

    app = make_app(state=ready_state(reached=1), start=1)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.query_one("#preset", Select).value = "custom"
        await settle(pilot)
        for key, value in (("layers", "40"), ("hidden", "5120"), ("heads", "40"),
                           ("kv_heads", "40"), ("ffn", "20480"), ("vocab", "50257")):
            await retype(pilot, screen.query_one(f"#dim-{key}", Input), value)
        gated = text_of(screen.query_one("#model-info"))
        assert "gated MLP" in gated
        screen.query_one("#dim-gated_mlp", Select).value = False
        await settle(pilot)
        info = text_of(screen.query_one("#model-info"))
        assert "13.1B params" in info and "plain MLP" in info and gated != info
        assert app.state.given["model"]["gated_mlp"] is False
        app.state.toggle_target("b200-sxm")
        app.action_save_answers()
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
    saved = tomllib.loads((tmp_path / "advisor-answers.toml").read_text(encoding="utf-8"))
    assert saved["workload"]["model"]["gated_mlp"] is False
    assert saved["workload"]["model"]["ffn"] == 20480
