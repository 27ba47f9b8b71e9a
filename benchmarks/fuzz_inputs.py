"""Generated inputs for every loader: hypothesis strategies, valid seeds and byte mutations.

Shared by `benchmarks/fuzz_loaders.py` (the full run, 10,000 inputs per loader) and the
tests that run a bounded, derandomized fraction of it, and by the property test that
every decision and report built from generated answers is finite
(tests/unit/test_finite.py). Answers are generated near the edges on purpose: counts,
sizes and prices at and just inside their bounds, where the arithmetic overflows first.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from advisor.core.model import bounds as B
from advisor.core.model.presets import PRESETS

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@functools.cache
def gpu_ids() -> tuple[str, ...]:
    from advisor.io.catalog_store import load_catalog

    return tuple(g.id for g in load_catalog().gpus)


def _edgy_int(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Integers in [lo, hi], often at an end or a power of two."""
    powers = [2**k for k in range(64) if lo <= 2**k <= hi]
    return st.one_of(st.sampled_from(sorted({lo, hi, *powers})), st.integers(lo, hi))


def _edgy_float(lo: float, hi: float, *, open_low: bool = False) -> st.SearchStrategy[float]:
    ends = [hi] + ([] if open_low else [lo])
    return st.one_of(st.sampled_from(ends),
                     st.floats(lo, hi, exclude_min=open_low, allow_nan=False),
                     st.floats(max(lo, 1e-6), hi, allow_nan=False))


@st.composite
def model_spec(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        return draw(st.sampled_from(sorted(PRESETS)))
    kv = draw(_edgy_int(1, 64))
    heads = kv * draw(_edgy_int(1, max(1, B.MAX_HEADS // kv)))
    spec: dict[str, Any] = {
        "layers": draw(_edgy_int(1, B.MAX_LAYERS)),
        "hidden": draw(_edgy_int(1, B.MAX_WIDTH)),
        "heads": heads, "kv_heads": kv,
        "ffn": draw(_edgy_int(1, B.MAX_WIDTH)),
        "vocab": draw(_edgy_int(1, B.MAX_VOCAB)),
    }
    if draw(st.booleans()):
        spec["head_dim"] = draw(_edgy_int(1, 4096))
    if draw(st.booleans()):
        experts = draw(_edgy_int(2, 1024))
        spec |= {"experts": experts, "active_experts": draw(st.integers(1, experts)),
                 "shared_experts": draw(st.integers(0, 2)),
                 "moe_ffn": draw(_edgy_int(1, B.MAX_WIDTH)),
                 "dense_layers": draw(st.integers(0, spec["layers"] - 1))}
    return spec


@st.composite
def workload(draw: st.DrawFn, gpus_max: int = B.MAX_GPUS) -> dict[str, Any]:
    model = draw(model_spec())
    experts = model.get("experts", 0) if isinstance(model, dict) else PRESETS[model].experts
    mode = draw(st.sampled_from(["pretrain", "finetune", "lora", "prefill", "decode"]))
    tp, pp, cp = (draw(st.sampled_from([1, 1, 2, 4, 8])) for _ in range(3))
    group = tp * pp * cp
    dp = draw(_edgy_int(1, max(1, gpus_max // group)))
    gpus = dp * group
    nodes = draw(st.sampled_from([n for n in (1, 2, 4, 8, gpus) if gpus % n == 0]))
    eps = [e for e in (1, 2, 4, 8) if dp % e == 0 and (e == 1 or (experts and experts % e == 0))]
    seqs = draw(st.lists(_edgy_int(1, B.MAX_SEQ_LEN), min_size=1, max_size=4, unique=True))
    micro = draw(_edgy_int(1, B.MAX_MICRO_BATCH))
    w: dict[str, Any] = {
        "mode": mode, "model": model, "seq_lens": seqs, "micro_batch": micro,
        "precision": draw(st.sampled_from(["bf16", "fp16", "fp8", "fp4", "nvfp4"])),
        "optimizer": draw(st.sampled_from(["adamw", "adamw8bit", "sgd"])),
        "tp": tp, "pp": pp, "cp": cp, "ep": draw(st.sampled_from(eps)),
        "gpus": gpus, "nodes": nodes,
        "nic_gbit": draw(_edgy_float(B.MIN_NIC_GBIT, B.MAX_NIC_GBIT)),
        "fused_kernels": draw(st.booleans()),
        "attention_kernel": draw(st.sampled_from(["auto", "fa2", "fa3", "fa4"])),
    }
    if mode in ("pretrain", "finetune", "lora"):
        w |= {"zero_stage": draw(st.integers(0, 3)), "checkpointing": draw(st.booleans()),
              "offload_optimizer": draw(st.booleans())}
        if draw(st.booleans()):
            acc = draw(_edgy_int(1, max(1, B.MAX_GLOBAL_BATCH // (micro * dp))))
            if micro * dp * acc <= B.MAX_GLOBAL_BATCH:
                w["global_batch"] = micro * dp * acc
    if draw(st.booleans()):
        w["token_budget"] = draw(_edgy_float(B.MIN_TOKENS, B.MAX_TOKENS))
    if mode != "decode" and draw(st.integers(0, 4)) == 0:
        w["packed_doc_len"] = draw(st.integers(1, min(seqs)))
    return w


@st.composite
def pipeline_section(draw: st.DrawFn) -> dict[str, Any]:
    ids = gpu_ids()
    stages = []
    for i in range(draw(st.integers(2, 4))):
        stage: dict[str, Any] = {"name": f"s{i}", "gpu": draw(st.sampled_from(ids)),
                                 "gpus": draw(_edgy_int(1, 1024))}
        kind = draw(st.sampled_from(["tokens", "units", "flops"]))
        if kind == "tokens":
            stage["measured_tokens_per_s"] = draw(_edgy_float(B.MIN_RATE_PER_S, B.MAX_TOKENS_PER_S))
        elif kind == "units":
            stage["measured_units_per_s"] = draw(_edgy_float(B.MIN_RATE_PER_S, 1e6))
        else:
            stage["flops_per_token"] = draw(_edgy_float(B.MIN_FLOPS_PER_TOKEN,
                                                         B.MAX_FLOPS_PER_TOKEN))
            stage["mfu"] = draw(_edgy_float(B.MIN_MFU, 1))
            if draw(st.booleans()):
                stage["hop_s_per_unit"] = draw(_edgy_float(0, B.MAX_HOP_S))
        if draw(st.booleans()):
            idle = draw(_edgy_float(0, B.MAX_IDLE_W))
            stage |= {"idle_w": idle, "active_w": idle + draw(_edgy_float(1, 2000))}
            if stage["active_w"] > B.MAX_BOARD_W:
                del stage["active_w"], stage["idle_w"]
        stages.append(stage)
    spec: dict[str, Any] = {"stages": stages,
                            "tokens_per_unit": draw(_edgy_float(B.MIN_TOKENS_PER_UNIT,
                                                                B.MAX_TOKENS))}
    total = sum(s["gpus"] for s in stages)
    if draw(st.booleans()):
        spec["box_gpus"] = draw(st.integers(max(2, total), max(2, total) + 2048))
    if draw(st.booleans()):
        spec["token_budget"] = draw(_edgy_float(B.MIN_TOKENS, B.MAX_TOKENS))
    spec["span"] = draw(st.integers(1, 16))
    return spec


@st.composite
def answers_data(draw: st.DrawFn, sections: bool = True) -> dict[str, Any]:
    """Answers a user could write: valid types, values anywhere inside their bounds."""
    ids = gpu_ids()
    current = draw(st.sampled_from(ids))
    targets = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3, unique=True))
    data: dict[str, Any] = {"current": current, "targets": targets, "workload": draw(workload())}
    priced = draw(st.lists(st.sampled_from([current, *targets]), unique=True, max_size=4))
    data["prices"] = {g: draw(_edgy_float(B.MIN_USD_PER_GPU_HOUR, B.MAX_USD_PER_GPU_HOUR))
                      for g in priced}
    if draw(st.booleans()):
        data["electricity_usd_per_kwh"] = draw(_edgy_float(0, B.MAX_USD_PER_KWH))
    if draw(st.booleans()):
        data["power_cap_kw"] = draw(_edgy_float(B.MIN_POWER_CAP_KW, B.MAX_POWER_CAP_KW))
    if draw(st.booleans()):
        data["time_premium"] = draw(_edgy_float(0, B.MAX_TIME_PREMIUM))
    if sections and draw(st.integers(0, 3)) == 0:
        cfg: dict[str, Any] = {"gpus_per_node": draw(st.sampled_from([1, 4, 8, 72]))}
        if draw(st.booleans()):
            cfg["counts"] = draw(st.lists(_edgy_int(1, B.MAX_SWEEP_GPUS), min_size=1,
                                          max_size=B.MAX_SWEEP_COUNTS, unique=True))
        else:
            cfg["max_gpus"] = draw(_edgy_int(1, B.MAX_SWEEP_GPUS))
        if draw(st.booleans()):
            cfg["deadline_days"] = draw(_edgy_float(B.MIN_DEADLINE_DAYS, B.MAX_DEADLINE_DAYS))
        cfg["objective"] = draw(st.sampled_from(["cost", "time"]))
        data["configs"] = cfg
    if sections and draw(st.integers(0, 3)) == 0:
        data["pipeline"] = draw(pipeline_section())
    return data


# --- seeds and mutation --------------------------------------------------------------------

def seed_texts() -> dict[str, list[bytes]]:
    """Valid documents of each kind, to mutate: what a user or a server would send."""
    answers = (EXAMPLES / "answers.toml").read_bytes()
    pipeline = answers + b"\n" + (EXAMPLES / "configs_pipeline.toml").read_bytes()
    record = json.dumps(probe_record()).encode()
    return {
        "answers": [answers, pipeline],
        "probe": [record],
        "price_csv": [b"gpu,usd_per_hour,label,source,retrieved\n"
                      b"h100-sxm,2.10,reserved 1-yr,finance Q3 sheet; quote 17,2026-01-15\n"
                      b"H200 SXM,3.05,,,\n"],
        "price_toml": [b'[[price]]\ngpu = "h100-sxm"\nusd_per_hour = 2.1\n'
                       b'label = "reserved"\nsource = ["finance"]\nretrieved = 2026-01-15\n'],
        "price_json": [json.dumps({"price": [{"gpu": "h100-sxm", "usd_per_hour": 2.1,
                                              "label": "reserved"}]}).encode()],
        "catalog": [catalog_overlay()],
    }


def probe_record(gpu: str = "h200-sxm", **figures: float) -> dict[str, Any]:
    return {
        "schema": "advisor.probe-record", "version": 1, "complete": True, "interrupted": False,
        "stamp": {"hostname": "box", "date": "2026-03-01T10:00:00Z",
                  "device": {"kind": "cuda", "name": "NVIDIA H200", "count": 8,
                             "catalog_id": gpu},
                  "versions": {"python": "3.11.9", "torch": "2.7.1+cu128", "cuda": "12.8"}},
        "matmul": [{"status": "ok", "dtype": "bf16", "mode": "quick",
                    "mamf_tflops": figures.get("mamf", 700.0),
                    "median_tflops": figures.get("median", 650.0)}],
        "attention": [{"status": "ok", "backend": "sdpa", "seq_len": 4096, "head_dim": 128,
                       "heads": 32, "kv_heads": 8, "batch": 1, "causal": True,
                       "direction": "fwd_bwd", "tflops_median": figures.get("attn", 400.0)}],
        "bandwidth": [{"status": "ok", "kind": "d2d", "bytes": 1 << 30,
                       "gbps_median": figures.get("d2d", 4000.0)},
                      {"status": "ok", "kind": "h2d", "bytes": 1 << 28,
                       "gbps_median": figures.get("h2d", 50.0)}],
        "collectives": [{"status": "ok", "backend": "nccl", "world_size": 8, "bytes": 1 << 28,
                         "busbw_gbps": figures.get("busbw", 350.0)}],
    }


def catalog_overlay() -> bytes:
    """A team catalog: one new GPU (copied from a shipped one) and its price."""
    import tomllib

    from advisor.io.catalog_store import read_shipped_texts

    gpus = tomllib.loads(read_shipped_texts()["gpus.toml"])["gpu"]
    h100 = next(g for g in gpus if g["id"] == "h100-sxm")
    team = {**h100, "id": "team-x", "name": "Team X", "aliases": []}
    doc = {"gpu": [team], "price": [{"gpu": "team-x", "usd_per_hour": 2.5, "label": "team rate",
                                     "default": True, "source": ["team"],
                                     "retrieved": "2026-01-01"}]}
    return json.dumps(doc, default=str).encode()


_SPICE = [b"\x00", b"\xff", b"\xef\xbb\xbf", b"\x1b[2J", b"nan", b"inf", b"-5", b"0", b"1e308",
          b"-1e308", b"99999999999999999999999999999999", b"[[", b"]]", b"{", b"}", b'"', b"'",
          b"\n", b",", b"=", b"[" * 100, b"{" * 100, b"9" * 5000]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """A valid seed with a few byte-level edits: replace, insert, delete or duplicate."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(data)))
        op = draw(st.integers(0, 3))
        if op == 0:
            piece = draw(st.one_of(st.sampled_from(_SPICE), st.binary(max_size=8)))
            data[pos:pos + draw(st.integers(0, 8))] = piece
        elif op == 1:
            data[pos:pos] = draw(st.one_of(st.sampled_from(_SPICE), st.binary(max_size=8)))
        elif op == 2:
            del data[pos:pos + draw(st.integers(1, 64))]
        else:
            end = min(len(data), pos + draw(st.integers(1, 256)))
            data[pos:pos] = data[pos:end]
    return bytes(data)


def number_swap(seed: bytes) -> st.SearchStrategy[bytes]:
    """The seed with one number replaced by an edge value: what a typo or a hostile file does."""
    import re

    spans = [m.span() for m in re.finditer(rb"-?\d+(\.\d+)?(e[+-]?\d+)?", seed)]
    edges = [b"0", b"-1", b"-5", b"1e308", b"1e-308", b"nan", b"inf", b"-inf", b"10" * 15,
             b"1e30", b"0.0", b"4294967296", b"262145", b"1000"]
    if not spans:
        return st.just(seed)
    return st.tuples(st.sampled_from(spans), st.sampled_from(edges)).map(
        lambda t: seed[:t[0][0]] + t[1] + seed[t[0][1]:])


@st.composite
def price_rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Price-sheet rows a team might send: real and loose GPU names, prices in and just out
    of bounds, labels and citations with any text (control characters included)."""
    ids = [*gpu_ids(), "H100 SXM", "h100", "B200", "nope", ""]
    rows = []
    for gpu in draw(st.lists(st.sampled_from(ids), min_size=1, max_size=6)):
        row: dict[str, Any] = {"gpu": gpu, "usd_per_hour": draw(st.one_of(
            st.floats(0.01, 200), st.sampled_from([0.0, -1.0, 0.009, 200.01, 1e308]),
            st.floats(allow_nan=False, allow_infinity=False)))}
        if draw(st.booleans()):
            row["label"] = draw(st.text(max_size=30))
        if draw(st.booleans()):
            row["source"] = draw(st.text(max_size=40))
        if draw(st.booleans()):
            row["retrieved"] = draw(st.sampled_from(["2026-01-15", "2026-13-01", "yesterday",
                                                     "1999-12-31"]))
        rows.append(row)
    return rows


def sheet_csv(rows: list[dict[str, Any]]) -> bytes:
    import csv
    import io

    out = io.StringIO()
    w = csv.DictWriter(out, ["gpu", "usd_per_hour", "label", "source", "retrieved"])
    w.writeheader()
    w.writerows(rows)
    return out.getvalue().encode("utf-8", "surrogatepass")


def sheet_json(rows: list[dict[str, Any]]) -> bytes:
    return json.dumps({"price": rows}).encode("utf-8", "surrogatepass")


def sheet_toml(rows: list[dict[str, Any]]) -> bytes:
    import tomlkit

    return tomlkit.dumps({"price": rows}).encode("utf-8", "surrogatepass")
