"""`report diff`: which prices, inputs, stack versions, probe figures and verdicts moved."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from advisor.core.comparison import decide
from advisor.core.model.probe_record import parse_probe_record
from advisor.core.report.answers_toml import parse_answers_toml
from advisor.core.report.diff import Change, diff_reports, probe_figures
from advisor.core.report.document import Provenance, Report, build_report

EXAMPLE = (Path(__file__).resolve().parents[2] / "examples" / "answers.toml").read_text()


def record(torch: str = "2.7.1+cu128", mamf: float = 760.0, d2d: float = 4100.0) -> Any:
    return parse_probe_record({
        "schema": "advisor.probe-record", "version": 1, "complete": True, "interrupted": False,
        "stamp": {"hostname": "box-1", "date": "2026-03-01T10:00:00Z",
                  "device": {"kind": "cuda", "name": "NVIDIA H200", "count": 8,
                             "catalog_id": "h200-sxm"},
                  "versions": {"python": "3.11.9", "torch": torch, "cuda": "12.8"}},
        "matmul": [{"status": "ok", "dtype": "bf16", "mode": "quick", "mamf_tflops": mamf}],
        "bandwidth": [{"status": "ok", "kind": "d2d", "bytes": 1 << 30, "gbps_median": d2d}],
        "attention": [{"status": "ok", "backend": "sdpa", "seq_len": 4096, "head_dim": 128,
                       "heads": 32, "kv_heads": 8, "batch": 1, "causal": True,
                       "direction": "fwd_bwd", "tflops_median": 400.0}],
    }, "probe.json")


def make(catalog, text: str = EXAMPLE, probes: dict[str, Any] | None = None,
         catalog_version: str = "aaaa") -> Report:
    answers = parse_answers_toml(text, "answers.toml")
    provenance = Provenance(advisor_version="0.1.0", catalog_version=catalog_version,
                            created=datetime(2026, 3, 2, tzinfo=UTC))
    return build_report(decide(answers, catalog, probes), catalog, probes or {}, provenance)


def by_item(changes: list[Change]) -> dict[str, Change]:
    return {c.item: c for c in changes}


def test_identical_reports_have_no_changes(catalog) -> None:
    r = make(catalog, probes={"h200-sxm": record()})
    assert diff_reports(r, r) == []


def test_a_new_quote_flips_the_verdict_and_says_why(catalog) -> None:
    old = make(catalog)
    new = make(catalog, EXAMPLE.replace("h200-sxm = 3.50", "h200-sxm = 4.50"))
    changes = diff_reports(old, new)
    assert changes[0].topic == "verdict"  # the answer first
    items = by_item(changes)
    price = items["h200-sxm $/GPU-hour"]
    assert (price.topic, price.old, price.new, price.delta) == ("prices", "3.5", "4.5", "+28.6%")
    verdict = items["b200-sxm verdict"]
    assert verdict.old != verdict.new
    assert items["h200-sxm @4096 $/Mtok"].topic == "projection"
    assert {c.topic for c in changes} == {"verdict", "projection", "prices"}


def test_stack_and_inputs(catalog) -> None:
    old = make(catalog)
    new = make(catalog, EXAMPLE.replace("2.7.1+cu128", "2.8.0+cu128")
               .replace("gpus = 8", "gpus = 16").replace("electricity_usd_per_kwh = 0.11", "#"))
    items = by_item(diff_reports(old, new))
    assert (items["packages.torch"].topic, items["packages.torch"].new) == ("stack", "2.8.0+cu128")
    gpus = items["workload.gpus"]
    assert (gpus.topic, gpus.old, gpus.new, gpus.delta) == ("inputs", "8", "16", "+100.0%")
    source = items["electricity source"]
    assert (source.old, source.new) == ("user", "default")
    assert items["electricity_usd_per_kwh"].new == "0.12"


def test_probe_figures_and_versions(catalog) -> None:
    old = make(catalog, probes={"h200-sxm": record()})
    new = make(catalog, probes={"h200-sxm": record(torch="2.4.0+cu124", mamf=836.0)})
    items = by_item(diff_reports(old, new))
    mamf = items["h200-sxm MAMF bf16 TFLOPS"]
    assert (mamf.topic, mamf.delta) == ("probes", "+10.0%")
    assert items["h200-sxm torch version"].new == "2.4.0+cu124"
    assert "h200-sxm d2d GB/s" not in items  # unchanged figures are not listed

    gone = by_item(diff_reports(old, make(catalog)))
    assert (gone["h200-sxm record"].old, gone["h200-sxm record"].new) == (
        "2026-03-01T10:00:00Z", "none")


def test_probe_figures_cover_the_headline_measurements() -> None:
    figures = probe_figures(record())
    assert figures["MAMF bf16 TFLOPS"] == 760.0 and figures["d2d GB/s"] == 4100.0
    assert figures["attention s4096 d128 causal fwd_bwd TFLOPS"] == 400.0
    assert figures["torch version"] == "2.7.1+cu128"


def test_provenance(catalog) -> None:
    items = by_item(diff_reports(make(catalog), make(catalog, catalog_version="bbbb")))
    assert items["catalog version"].old == "aaaa" and items["catalog version"].topic == "provenance"


def test_the_probe_table_shows_each_gpus_mamf_in_its_format(catalog) -> None:
    from advisor.present.blocks import Table
    from advisor.present.report import provenance_blocks

    r = make(catalog, probes={"h200-sxm": record()})
    table = next(b for b in provenance_blocks(r)
                 if isinstance(b, Table) and b.title == "Probe records used")
    (row,) = table.rows
    assert (row[0], row[-2], row[-1]) == ("h200-sxm", "bf16", "760")
