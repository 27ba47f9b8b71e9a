"""Pilot tests for the back half: Performance, Verdict, export, copy summary, ranking,
resume, the palette, and startup weight."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
from textual.widgets import DataTable, Input

from advisor.core import parse_report, report_to_toml
from advisor.present import report as document_of
from advisor.present.markdown import document
from advisor.present.report import summary_blocks, title
from advisor.tui.demo import settle
from advisor.tui.export import state_from_report
from advisor.tui.screens.export import ExportScreen, SummaryScreen
from advisor.tui.screens.performance import PerformanceScreen
from advisor.tui.screens.ranking import RankingScreen
from advisor.tui.screens.verdict import VerdictScreen

from .conftest import NARROW, WIDE, open_ranking, table_text, text_of

LAST = VerdictScreen.STEP


def at_verdict(ready_state, **kw):
    return ready_state(targets=["b200-sxm", "h200-sxm"], reached=LAST, **kw)


async def test_export_writes_the_report_shown(make_app, ready_state, tmp_path):
    app = make_app(state=at_verdict(ready_state, given={"token_budget": 1e11}), start=LAST)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        report = app.report
        assert report is not None
        await pilot.press("ctrl+e")
        assert isinstance(app.screen, ExportScreen)
        assert app.screen.query_one("#export-path", Input).value == \
            str(tmp_path / "advisor-report.toml")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, VerdictScreen)
    written = tmp_path / "advisor-report.toml"
    assert app.exported == written
    text = written.read_text(encoding="utf-8")
    assert text == report_to_toml(report), "the Report on screen, not a second assembly"
    assert parse_report(text, "r").decision.answers == report.decision.answers
    assert not list(tmp_path.glob(".advisor-report.toml.*")), "no temporary file left behind"


async def test_export_confirms_before_replacing_and_refuses_a_missing_folder(
        make_app, ready_state, tmp_path):
    target = tmp_path / "advisor-report.toml"
    target.write_text("keep me", encoding="utf-8")
    app = make_app(state=at_verdict(ready_state), start=LAST)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+e")
        field = app.screen.query_one("#export-path", Input)
        field.value = str(tmp_path / "nowhere" / "r.toml")
        await pilot.press("enter")
        help_text = text_of(app.screen.query_one("#export-help"))
        assert "does not exist" in help_text and isinstance(app.screen, ExportScreen)
        assert not (tmp_path / "nowhere").exists(), "no folder is created behind your back"
        field.value = str(target)
        await pilot.press("enter")
        assert "exists: replace it?" in text_of(app.screen.query_one("#export-help"))
        assert target.read_text(encoding="utf-8") == "keep me"
        await pilot.press("escape")
        assert target.read_text(encoding="utf-8") == "keep me", "esc keeps the old file"
        await pilot.press("ctrl+e")
        await pilot.press("enter", "enter")
        await settle(pilot)
    assert target.read_text(encoding="utf-8").startswith("# advisor decision report")


async def test_copy_summary_puts_markdown_on_the_clipboard_and_saves_it(
        make_app, ready_state, tmp_path):
    app = make_app(state=at_verdict(ready_state, quotes={"b200-sxm": ("usd", 4.5)}),
                   start=LAST)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        report = app.report
        await pilot.press("ctrl+y")
        assert isinstance(app.screen, SummaryScreen)
        text = app.clipboard
        assert text == document(summary_blocks(report), title(report)), "the CLI's Markdown"
        whole = document_of.blocks(report, dialect="wizard")
        assert [b for b in summary_blocks(report)[:-1] if b not in whole] == [], \
            "a subset of the whole report's blocks, its provenance line aside"
        assert text.startswith("# advisor: 8x h100-sxm against 8x b200-sxm")
        for t in report.decision.targets:
            assert f"{t.gpu} vs {report.decision.current.gpu}" in text
        assert "Defaults (values you did not give)" in text and "speedup_low" not in text
        await pilot.press("enter")
        await settle(pilot)
    saved = tmp_path / "advisor-summary.md"
    assert saved.read_text(encoding="utf-8") == text


async def test_verdict_cards_render_core_s_fields(make_app, ready_state):
    app = make_app(state=at_verdict(ready_state), start=LAST)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        report = app.report
        cards = [text_of(c) for c in app.screen.query(".verdict-card")]
        joined = "\n".join(cards)
        for t in report.decision.targets:
            for s in t.sensitivity:
                assert s.assumption in joined
        assert "Defaults (values you did not give)" in joined
        for d in report.decision.defaults:
            assert d.field.startswith(("workload.", "prices.", "electricity"))
        for word in ("speedup_low", "buy_back", "tp*pp*cp", "--price"):
            assert word not in joined


def test_the_sensitivity_says_what_core_says(shipped):
    """The assumptions that move the verdict, one row each with the verdict at each end as
    core judged it; the ones that do not, named in a note. The card and the CLI draw these
    same blocks."""
    from advisor.core import Answers, run
    from advisor.present.blocks import Table
    from advisor.present.decision import sensitivity
    from advisor.present.verdict import KIND_WORDS

    answers = Answers.model_validate({"current": "h200-sxm", "targets": ["b200-sxm"],
                                      "workload": {"model": "llama-3.1-8b",
                                                   "seq_lens": [8192]}})
    rows = run(answers, shipped, {}).decision.targets[0].sensitivity
    moving = [s for s in rows if s.flips]
    assert moving and len(moving) < len(rows), "the case has both kinds"
    (table,) = sensitivity(rows)
    assert isinstance(table, Table)
    assert [r[0] for r in table.rows] == [s.assumption for s in moving]
    for s, row in zip(moving, table.rows, strict=True):
        assert row[2] == f"{KIND_WORDS[s.verdict_low]} / {KIND_WORDS[s.verdict_high]}"
    held = table.notes[-1]
    assert all(s.assumption in held for s in rows if not s.flips)
    assert sensitivity([s.model_copy(update={"flips": False}) for s in rows])[0].text \
        .startswith("No assumption moves the verdict")  # type: ignore[union-attr]


async def test_performance_views(make_app, ready_state):
    state = ready_state(targets=["b200-sxm", "v100-sxm2"], given={"seq_lens": (2048, 8192)},
                        reached=PerformanceScreen.STEP)
    app = make_app(state=state, start=PerformanceScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        report = app.report
        table = app.screen.query_one("#sweep", DataTable)
        assert table.row_count == 2 * 3
        assert "memory\nGiB of usable" in [str(c.label) for c in table.columns.values()]
        await pilot.press("ctrl+t")
        buckets = text_of(app.screen.query_one("#buckets"))
        assert "dense GEMMs" in buckets and "attention" in buckets
        assert "v100-sxm2" in buckets and "not projected" in buckets
        await pilot.press("ctrl+t")
        layouts = text_of(app.screen.query_one("#layouts"))
        kernel = report.decision.current.assumptions.attention_kernel
        assert f"attention kernel {kernel}" in layouts
        assert "re-tuned:" in layouts and "as you run it:" in layouts


async def test_ranking_lists_every_catalog_gpu(make_app, ready_state, catalog):
    app = make_app(state=at_verdict(ready_state), start=LAST)
    async with app.run_test(size=WIDE) as pilot:
        screen = await open_ranking(pilot)
        assert isinstance(screen, RankingScreen)
        report = screen.report
        assert report is not None
        assert {t.gpu for t in report.decision.targets} == \
            {g.id for g in catalog.gpus} - {"h100-sxm"}
        table = screen.query_one("#rank-table", DataTable)
        ranked = [k.value for k in table.rows]
        out = text_of(screen.query_one("#rank-out"))
        assert "v100-sxm2" in out and "v100-sxm2" not in ranked, "gated out, said why"
        costs = [report.decision.targets[[t.gpu for t in report.decision.targets].index(g)]
                 if g != "h100-sxm" else report.decision.current for g in ranked]
        usd = [r.point(report.decision.primary_seq_len).usd_per_mtok for r in costs]
        priced = [u for u in usd if u is not None]
        assert priced == sorted(priced) and usd[:len(priced)] == priced
        assert "default" in table_text(table)
        await pilot.press("2")
        assert "time" in text_of(screen.query_one("#rank-head"))
        await pilot.press("escape")
        assert isinstance(app.screen, VerdictScreen)


async def test_when_nothing_ranks_what_is_out_fills_the_dialog(make_app, ready_state, shipped):
    """A deadline no GPU meets: the ranking has no table, and the GPUs that are out, with
    why, take the dialog's height and the keys (they had a third of it, under an empty
    table, and no key scrolled them)."""
    from advisor.core import ConfigOptions

    state = at_verdict(ready_state, given={"token_budget": 1e12},
                       configs=ConfigOptions(deadline_days=0.5))
    app = make_app(state=state, start=LAST, with_catalog=shipped)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_ranking(pilot)
        assert isinstance(screen, RankingScreen)
        assert screen.ranking is not None and not screen.ranking.ranked
        assert not screen.query_one("#rank-table").display
        more = screen.query_one("#rank-more")
        assert app.focused is more
        assert more.size.height > screen.size.height // 2
        assert more.max_scroll_y > 0, "the shipped catalog's 40 GPUs are more than a screen"
        before = more.scroll_y
        await pilot.press("pagedown")
        await settle(pilot)
        assert more.scroll_y > before


async def test_resume_shows_the_saved_report_then_recomputes_on_change(make_app, ready_state,
                                                                       tmp_path, catalog):
    from advisor.core import Answers, run

    answers = Answers.model_validate({
        "current": "h100-sxm", "targets": ["b200-sxm@16", "h200-sxm"],
        "prices": {"b200-sxm": 4.5}, "time_premium": 0.25,
        "workload": {"model": "llama-3.1-8b", "seq_lens": [4096], "gpus": 8, "pp": 2,
                     "global_batch": 64, "optimizer": "sgd", "token_budget": 1e11}})
    report = run(answers, catalog, {})
    path = tmp_path / "r.toml"
    path.write_text(report_to_toml(report), encoding="utf-8")
    loaded = parse_report(path.read_text(encoding="utf-8"), str(path))
    state = state_from_report(loaded)
    assert state.counts == {"b200-sxm": 16} and state.quotes == {"b200-sxm": ("usd", 4.5)}
    assert state.given["pp"] == 2 and state.given["optimizer"] == "sgd"
    assert "micro_batch" not in state.given, "a default stays a default"
    app = make_app(state=state, start=LAST, report=loaded)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert app.report is loaded, "the saved report, not a new one"
        assert app.answers() == loaded.decision.answers
        await pilot.press("escape", "escape", "escape", "escape", "escape", "escape")
        await settle(pilot)
        await pilot.press("ctrl+n", "ctrl+n", "ctrl+n", "ctrl+n", "ctrl+n", "ctrl+n")
        await settle(pilot)
        assert app.report is loaded, "walking through without a change keeps it"


async def test_resume_keeps_a_current_gpu_count_and_its_quoted_price(make_app, ready_state,
                                                                     tmp_path, catalog):
    """`current = "h100-sxm@8"` with its price quoted: the price is keyed by the id, so a
    resumed wizard held the count in the id and lost the quote (the default $3.90 replaced
    the user's $2.50, and the verdict flipped from break-even to upgrade)."""
    from advisor.core import Answers, run

    answers = Answers.model_validate({
        "current": "h100-sxm@8", "targets": ["b200-sxm@4"],
        "prices": {"h100-sxm": 2.5, "b200-sxm": 5.0},
        "workload": {"model": "llama-3.1-8b", "seq_lens": [8192], "token_budget": 1e11}})
    report = run(answers, catalog, {})
    path = tmp_path / "r.toml"
    path.write_text(report_to_toml(report), encoding="utf-8")
    loaded = parse_report(path.read_text(encoding="utf-8"), str(path))
    state = state_from_report(loaded)
    assert (state.current, state.current_count) == ("h100-sxm", 8)
    assert state.current_price(catalog) == 2.5
    app = make_app(state=state, start=LAST, report=loaded)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert app.answers() == loaded.decision.answers
        assert app.report is loaded, "the saved report, not a new one"
    state.give("gpus", 16)  # a count typed on Workload is the current side's again
    assert state.current_spec() == "h100-sxm"


async def test_palette_commands_and_screenshot(make_app, ready_state, tmp_path):
    app = make_app(state=at_verdict(ready_state), start=LAST)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for title in ("Export report (TOML)", "Copy summary", "Rank every GPU",
                      "Help and glossary", "Go to step 1: Welcome"):
            assert title in titles
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert len(list(tmp_path.glob("*.svg"))) == 1


async def test_unprojectable_answers_say_so(make_app, ready_state):
    state = at_verdict(ready_state, given={"tp": 16, "gpus": 8})
    app = make_app(state=state, start=LAST)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        error = text_of(app.screen.query_one("#compute-error"))
        assert "Cannot project these answers" in error and "TP x PP x CP" in error
        await pilot.press("ctrl+e")
        assert not isinstance(app.screen, ExportScreen), "nothing to export"


def test_startup_imports_neither_torch_nor_numpy():
    """Nor the later steps' screens, nor the engine: they load after the first paint."""
    later = ("advisor.tui.screens.workload", "advisor.tui.screens.configs",
             "advisor.core.run", "advisor.core.model.answers")
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


def test_run_app_refuses_a_bad_report_before_taking_the_screen(tmp_path):
    from advisor.core import InputError
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
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert app.ctx.hardware is gpu_box
        assert app.state.current == "h100-sxm"
        assert "8x NVIDIA H100" in text_of(app.screen.query_one("#box"))


def test_report_toml_is_stdlib_readable(catalog):
    from advisor.core import Answers, run

    answers = Answers.model_validate({"current": "h100-sxm", "targets": ["b200-sxm"],
                                      "workload": {"model": "llama-3.1-8b",
                                                   "seq_lens": [4096]}})
    assert tomllib.loads(report_to_toml(run(answers, catalog, {})))["schema"] == \
        "advisor.decision-report"
