"""The wizard and `advisor decide` reach the same report from the same answers.

Pilot drives the wizard, key by key, through the answers an answers file gives: a target
that fails the software gate (MI300X with a CUDA torch), prices (one as a ratio to the
current GPU's), the layout in the Advanced group, a declared stack, sweep options; two
probe records filed with `advisor probe import` from different stacks (torch 2.7.1 and
2.8.0). The wizard's export and `advisor decide`'s report must agree field for field,
the creation time aside.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from textual.widgets import Input, Select

from advisor.tui.demo import DemoProbeRunner, settle
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.screens.export import ExportScreen
from advisor.tui.screens.gates import DtypeScreen, SoftwareScreen
from advisor.tui.screens.performance import PerformanceScreen
from advisor.tui.screens.probes import ProbesScreen
from advisor.tui.screens.targets import TargetsScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.screens.workload import WorkloadScreen

from .conftest import WIDE

ANSWERS = """\
current = "h100-sxm"
targets = ["b200-sxm", "mi300x"]
electricity_usd_per_kwh = 0.11
time_premium = 0.2

[prices]
h100-sxm = 2.5
b200-sxm = 6.25

[workload]
model = "llama-3.1-8b"
seq_lens = [4096, 8192]
global_batch = 64
zero_stage = 1
recompute = "selective"
fused_kernels = true
token_budget = 1.0e11

[stack]
source = "declared"
packages = { torch = "2.7.1+cu128", flash-attn = "2.8.3" }

[configs]
counts = [8, 16]
deadline_days = 30.0
"""


def file_record(home: Path, gpu: str, device: str, torch: str) -> None:
    """A probe record as `advisor probe import` files it, measured with `torch`."""
    record = DemoProbeRunner(device=device).run("quick", lambda _: None, lambda: False)
    data = json.loads(record.model_dump_json(by_alias=True))
    data["stamp"]["device"]["catalog_id"] = gpu
    data["stamp"]["versions"]["torch"] = torch
    folder = home / "probes"
    folder.mkdir(exist_ok=True)
    (folder / f"{gpu}.json").write_text(json.dumps(data), encoding="utf-8")


def without_created(report: dict[str, Any]) -> dict[str, Any]:
    report = dict(report)
    report["provenance"] = {k: v for k, v in report["provenance"].items() if k != "created"}
    return report


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b))
                for d in differences(a.get(k), b.get(k), f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: wizard {a!r} != decide {b!r}"]


async def choose(pilot: Any, select: Select[Any], downs: int) -> None:
    """Open a Select with enter, move down, pick with enter (the blank default is first)."""
    select.focus()
    await pilot.press("enter", *["down"] * downs, "enter")
    await settle(pilot)


async def type_into(pilot: Any, field: Input, text: str) -> None:
    field.focus()
    await pilot.press(*text)
    await settle(pilot)


async def test_wizard_and_decide_write_the_same_report(make_app, shipped, cpu_box, tmp_path,
                                                       advisor_home):
    file_record(advisor_home, "h100-sxm", "NVIDIA H100 80GB HBM3", "2.7.1+cu128")
    file_record(advisor_home, "b200-sxm", "NVIDIA B200", "2.8.0+cu128")
    answers = tmp_path / "answers.toml"
    answers.write_text(ANSWERS, encoding="utf-8")
    decided = tmp_path / "decide.toml"
    out = subprocess.run([sys.executable, "-m", "advisor", "decide", "--answers", str(answers),
                          "--out", str(decided)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "stack drift" in out.stderr.lower() or "stack" in out.stderr.lower()

    app = make_app(hardware=cpu_box, with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await pilot.press(*"h100-sxm", "enter", "ctrl+n")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WorkloadScreen)
        assert app.state.given == {"model": "llama-3.1-8b", "seq_lens": (4096, 8192)}
        await type_into(pilot, screen.query_one("#token_budget", Input), "100B")
        screen.query_one("#advanced CollapsibleTitle").focus()
        await pilot.press("enter")  # opens the Advanced group
        await settle(pilot)
        await type_into(pilot, screen.query_one("#global_batch", Input), "64")
        await choose(pilot, screen.query_one("#zero_stage", Select), 2)  # ZeRO-1
        await choose(pilot, screen.query_one("#recompute", Select), 2)  # selective
        await choose(pilot, screen.query_one("#fused_kernels", Select), 2)  # yes
        assert app.state.given["zero_stage"] == 1 and app.state.given["fused_kernels"] is True
        await pilot.press("ctrl+n")
        screen = app.screen
        assert isinstance(screen, TargetsScreen)
        await pilot.press(*"b200-sxm", "enter", *"mi300x", "enter")
        assert app.state.targets == ("b200-sxm", "mi300x")
        await type_into(pilot, screen.query_one("#price-h100-sxm", Input), "2.5")
        await type_into(pilot, screen.query_one("#price-b200-sxm", Input), "2.5x")
        await type_into(pilot, screen.query_one("#electricity", Input), "0.11")
        await type_into(pilot, screen.query_one("#premium", Input), "20")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, DtypeScreen)
        await pilot.press("ctrl+n")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SoftwareScreen)
        await type_into(pilot, screen.query_one("#stack", Input),
                        "torch==2.7.1+cu128 flash-attn==2.8.3")
        report = app.report
        assert report is not None
        mi300x = report.decision.targets[1]
        assert mi300x.verdict is not None and mi300x.verdict.kind == "blocked-by-gate"
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, ProbesScreen)
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, PerformanceScreen)
        await pilot.press("ctrl+n")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ConfigsScreen)
        counts = screen.query_one("#counts", Input)
        counts.focus()
        counts.value = ""
        await pilot.press(*"8, 16")
        await type_into(pilot, screen.query_one("#deadline", Input), "30")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, VerdictScreen)
        report = app.report
        assert report is not None and report.warnings, "stack drift between the two records"
        await pilot.press("ctrl+e")
        assert isinstance(app.screen, ExportScreen)
        path = app.screen.query_one("#export-path", Input)
        path.value = str(tmp_path / "wizard.toml")
        await pilot.press("enter")
        await settle(pilot)
    wizard = tomllib.loads((tmp_path / "wizard.toml").read_text(encoding="utf-8"))
    decide = tomllib.loads(decided.read_text(encoding="utf-8"))
    assert set(wizard["probes"]) == {"h100-sxm", "b200-sxm"}
    assert any("stack drift" in w for w in wizard["warnings"])
    assert [t["verdict"]["kind"] for t in wizard["targets"]][1] == "blocked-by-gate"
    diff = differences(without_created(wizard), without_created(decide))
    assert not diff, "\n".join(diff[:20])
