"""Each target's own stack and layout on Targets, and the one ranking on ^k (issue 30's wizard
side): a TPU is blocked with the CUDA job's stack and passes with the one it would run; a
blank degree on a target is its own re-tune; a GPU that needs only an upgrade is ranked with
the upgrade beside it, one that needs another vendor's stack is out with what to install."""

from __future__ import annotations

from textual.widgets import Button, DataTable, Input, Select

from advisor.core import parse_stack
from advisor.tui.demo import settle
from advisor.tui.screens.gates import SoftwareScreen
from advisor.tui.screens.layout import LayoutScreen
from advisor.tui.screens.ranking import RankingScreen
from advisor.tui.screens.targets import TargetsScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.screens.workload import WorkloadScreen

from .conftest import WIDE, open_advanced, open_ranking, retype, table_text, text_of

CUDA_124 = "torch==2.5.1+cu124 flash-attn==2.7.4"
XLA = "torch==2.8.0 torch-xla==2.8.0"


def cuda_job(ready_state, step: int, targets: list[str]):
    """An H100 job declared on a CUDA 12.4 torch with FlashAttention, not this box's stack."""
    return ready_state(targets=targets, reached=step, stack=parse_stack(CUDA_124),
                       box_stack=False)


async def open_layout(pilot, gpu_id: str) -> LayoutScreen:
    app = pilot.app
    next(b for b in app.screen.query(".price-layout").results(Button)
         if b.name == gpu_id).press()
    await settle(pilot)
    assert isinstance(app.screen, LayoutScreen)
    return app.screen


async def test_a_target_runs_its_own_stack_set_on_targets(make_app, ready_state, shipped):
    """With the job's CUDA stack a TPU v5p is blocked with PyTorch/XLA to install; given
    'torch-xla' in its layout dialog it is checked against that stack, passes, and says so."""
    state = cuda_job(ready_state, SoftwareScreen.STEP, ["tpu-v5p", "b200-sxm"])
    app = make_app(state=state, start=SoftwareScreen.STEP, with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert app.report is not None
        tpu = app.report.decision.targets[0].software_gate
        assert tpu is not None and tpu.status == "blocked" and tpu.switch is not None
        assert "install PyTorch/XLA" in tpu.summary
        app.goto(TargetsScreen.STEP)
        await settle(pilot)
        dialog = await open_layout(pilot, "tpu-v5p")
        stack = dialog.query_one("#l-stack", Input)
        assert stack.value == "" and "job's stack" in stack.placeholder
        await retype(pilot, stack, XLA)
        assert "this GPU's own" in text_of(dialog.query_one("#lf-stack").query_one(
            ".field-note"))
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, TargetsScreen)
        assert set(app.state.stacks) == {"tpu-v5p"} and "tpu-v5p" not in app.state.layouts
        answers = app.answers()
        assert set(answers.stacks) == {"tpu-v5p"}
        assert answers.stacks["tpu-v5p"].packages == {"torch": "2.8.0", "torch-xla": "2.8.0"}
        notes = [text_of(n) for n in app.screen.query(".price-note")]
        assert any(f"runs {XLA}" in n for n in notes)
        app.goto(SoftwareScreen.STEP)
        await settle(pilot)
        assert app.report is not None
        gates = {t.gpu: t.software_gate for t in app.report.decision.targets}
        assert gates["tpu-v5p"] is not None and gates["tpu-v5p"].status == "ok"
        assert gates["b200-sxm"] is not None and gates["b200-sxm"].status == "blocked", \
            "the other target keeps the job's stack"
        table = app.screen.query_one("#gate", DataTable)
        rows = table_text(table).splitlines()
        assert "pass" in rows[1] and "tpu-v5p" in rows[1]
        table.focus()
        await pilot.press("down")
        detail = text_of(app.screen.query_one("#detail-text"))
        assert f"checked against its own stack (set with its layout on Targets): {XLA}" \
            in detail
        app.goto(TargetsScreen.STEP)
        await settle(pilot)
        dialog = await open_layout(pilot, "tpu-v5p")
        assert dialog.query_one("#l-stack", Input).value == XLA, "the dialog shows it back"
        await retype(pilot, dialog.query_one("#l-stack", Input), "")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert app.state.stacks == {}, "cleared: the job's stack again"


async def test_a_blank_degree_on_a_target_is_its_own_re_tune(make_app, ready_state):
    """EP 8 on the current side is what runs there: a target's dialog says a blank TP/EP is
    re-tuned for it (with what the current side runs), not inherited; the current GPU's
    own dialog has no stack (the job's is on Software) and its blanks are the workload's."""
    state = ready_state(targets=["b200-sxm"], reached=TargetsScreen.STEP, given={"ep": 8})
    app = make_app(state=state, start=TargetsScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        dialog = await open_layout(pilot, "b200-sxm")
        ep = dialog.query_one("#l-ep", Input)
        assert ep.placeholder == "re-tuned"
        note = text_of(dialog.query_one("#lf-ep").query_one(".field-note"))
        assert "re-tuned for this GPU; the current side runs 8" in note
        assert dialog.query("#l-stack")
        await pilot.press("escape")
        await settle(pilot)
        dialog = await open_layout(pilot, "h100-sxm")
        assert "(workload)" in dialog.query_one("#l-ep", Input).placeholder
        assert not dialog.query("#l-stack")


async def test_fsdp_shards_fully_and_a_servings_batch_is_re_tuned(make_app, ready_state):
    """FSDP named with no stage runs its FULL_SHARD (the sharding row said ZeRO-0 (DDP));
    serving's blank requests in flight read 're-tuned', not the form's 1."""
    app = make_app(state=ready_state(reached=WorkloadScreen.STEP), start=WorkloadScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        screen = app.screen
        await open_advanced(pilot)
        assert "ZeRO-0" in screen.query_one("#zero_stage", Select).prompt
        screen.query_one("#framework", Select).value = "fsdp"
        await settle(pilot)
        assert "ZeRO-3" in screen.query_one("#zero_stage", Select).prompt
        screen.query_one("#mode", Select).value = "serve"
        await settle(pilot)
        assert screen.query_one("#micro_batch", Input).placeholder == "re-tuned (default)"


async def test_the_ranking_ranks_an_upgrade_and_sets_another_stack_apart(
        make_app, ready_state, shipped):
    """torch 2.5.1+cu124 has no sm_100 kernels: the B200 is ranked on its figures with the
    upgrade beside it; a TPU needs another vendor's stack and is out, with what to install,
    until a target's own stack is given for it; ranked GPUs with no price or no stack
    checked say so."""
    state = cuda_job(ready_state, VerdictScreen.STEP, ["tpu-v5p"])
    app = make_app(state=state, start=VerdictScreen.STEP, with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await open_ranking(pilot)
        screen = app.screen
        assert isinstance(screen, RankingScreen)
        table = screen.query_one("#rank-table", DataTable)
        ranked = [k.value for k in table.rows]
        assert "b200-sxm" in ranked and "tpu-v5p" not in ranked
        assert str(table.get_cell("b200-sxm", "verdict")) == "upgrade first"
        out = text_of(screen.query_one("#rank-out"))
        first = out.split("Out (")[0]
        assert "b200-sxm" in first and "upgrade torch 2.5.1+cu124" in first
        tpu = next(line for line in out.splitlines() if "• tpu-v5p (" in line)
        assert "install PyTorch/XLA" in tpu
        unpriced = next(line for line in out.splitlines() if line.startswith("no price for"))
        assert "rtx-a6000" in unpriced and "quote one on step 3 (Targets and prices)" in unpriced
        assert "gated on the stack it would run" in out
        await pilot.press("escape")
        await settle(pilot)
        app.goto(TargetsScreen.STEP)
        await settle(pilot)
        await retype(pilot, (await open_layout(pilot, "tpu-v5p")).query_one("#l-stack", Input),
                     XLA)
        await pilot.press("ctrl+n")
        app.goto(VerdictScreen.STEP)
        await settle(pilot)
        await open_ranking(pilot)
        table = app.screen.query_one("#rank-table", DataTable)
        assert "tpu-v5p" in [k.value for k in table.rows], "its own stack runs there"
