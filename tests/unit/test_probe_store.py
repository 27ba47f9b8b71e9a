"""Importing probe records from other boxes, and the loud stack-drift warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.core.errors import InputError
from advisor.core.model.drift import drift_warning, stack_drift
from advisor.core.model.probe_record import parse_probe_record
from advisor.io.probe_store import import_probe, stored_probes, stored_workloads


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def record(catalog_id: str | None = "h100-sxm", kind: str = "cuda", **versions: Any) -> dict:
    stack = {"python": "3.11.9", "torch": "2.7.1+cu128", "cuda": "12.8", "cudnn": "9.7.1",
             "flash_attn": "2.7.4"}
    if kind == "rocm":
        stack = {"python": "3.11.9", "torch": "2.7.1+rocm6.3", "hip": "6.3"}
    stack.update(versions)
    return {
        "schema": "advisor.probe-record", "version": 1, "complete": True, "interrupted": False,
        "stamp": {
            "hostname": f"box-{catalog_id}", "date": "2026-03-01T10:00:00Z",
            "device": {"kind": kind, "name": f"GPU {catalog_id}", "count": 8,
                       "catalog_id": catalog_id},
            "versions": {k: v for k, v in stack.items() if v is not None},
        },
        "matmul": [{"status": "ok", "dtype": "bf16", "mode": "quick", "mamf_tflops": 700.0}],
        "written_by_a_newer_probe": "kept as-is",
    }


def write(tmp_path: Path, name: str, data: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=1))
    return path


def test_import_files_the_record_under_its_catalog_id(tmp_path, home, catalog) -> None:
    src = write(tmp_path, "r.json", record())
    done = import_probe(src, catalog)
    assert done.gpu_id == "h100-sxm" and done.replaced is None and done.drift == []
    assert done.path == home / "probes" / "h100-sxm.json"
    assert done.path.read_bytes() == src.read_bytes()  # stored exactly as measured
    assert stored_probes()["h100-sxm"].mamf("bf16") == 700.0
    assert "h100-sxm" in done.summary() and "torch 2.7.1+cu128" in done.summary()


def test_stack_drift_is_found_and_loud(tmp_path, catalog) -> None:
    import_probe(write(tmp_path, "a.json", record("h200-sxm")), catalog)
    done = import_probe(write(tmp_path, "b.json", record("b200-sxm", torch="2.4.0+cu124",
                                                         cuda="12.4", flash_attn=None)),
                        catalog)
    fields = {d.field: dict(d.values) for d in done.drift}
    assert set(fields) == {"torch", "torch local build", "cuda", "flash_attn"}
    assert fields["flash_attn"] == {"new b200-sxm": None, "h200-sxm": "2.7.4"}
    text = drift_warning(done.drift)
    assert text.startswith("WARNING: STACK DRIFT")
    assert "2.4.0+cu124 (new b200-sxm), 2.7.1+cu128 (h200-sxm)" in text
    assert "not installed (new b200-sxm)" in text and "+16-23%" in text


def test_equal_versions_written_differently_are_not_drift() -> None:
    a = parse_probe_record(record("h100-sxm"), "a")
    b = parse_probe_record(record("b200-sxm", torch="2.7.1+cu128", cuda="12.8.0"), "b")
    assert stack_drift({"a": a, "b": b}) == []
    assert stack_drift({"a": a}) == []


def test_another_cuda_build_of_the_same_torch_is_drift() -> None:
    a = parse_probe_record(record("h100-sxm"), "a")
    b = parse_probe_record(record("b200-sxm", torch="2.7.1+cu130", cuda="13.0"), "b")
    assert [d.field for d in stack_drift({"a": a, "b": b})] == ["torch local build", "cuda"]


def test_torch_local_build_tags_are_not_equal() -> None:
    a = parse_probe_record(record("h100-sxm", torch="2.7.1+cu128"), "a")
    b = parse_probe_record(record("b200-sxm", torch="2.7.1+cu130"), "b")
    plain = parse_probe_record(record("b200-sxm", torch="2.7.1"), "plain")
    assert [d.field for d in stack_drift({"a": a, "b": b})] == ["torch local build"]
    assert [d.line() for d in stack_drift({"a": a, "plain": plain})] == [
        "torch local build: cu128 (a), no local tag (plain)"
    ]


def test_vendor_libraries_compare_only_within_a_vendor() -> None:
    nv = parse_probe_record(record("h100-sxm"), "nv")
    amd = parse_probe_record(record("mi300x", kind="rocm", torch="2.7.1"), "amd")
    drift = stack_drift({"nv": nv, "amd": amd})
    assert [d.field for d in drift] == ["flash_attn"]  # not cuda, hip, cudnn


def test_reimport_replaces_and_compares_with_the_previous(tmp_path, catalog) -> None:
    import_probe(write(tmp_path, "old.json", record()), catalog)
    done = import_probe(write(tmp_path, "new.json", record(cudnn="9.8.0")), catalog)
    assert done.replaced is not None and "replaced the record" in done.summary()
    assert [d.field for d in done.drift] == ["cudnn"]
    assert list(stored_probes()) == ["h100-sxm"]


def test_catalog_id_override_and_refusals(tmp_path, home, catalog) -> None:
    anon = write(tmp_path, "anon.json", record(None))
    with pytest.raises(InputError) as exc:
        import_probe(anon, catalog)
    assert "pass --gpu" in exc.value.one_line() and "stamp.device.catalog_id" in str(exc.value)
    with pytest.raises(InputError, match="ambiguous"):
        import_probe(anon, catalog, gpu="sxm")
    assert import_probe(anon, catalog, gpu="H100-SXM").gpu_id == "h100-sxm"

    relabel = import_probe(write(tmp_path, "r.json", record("h200-sxm")), catalog, gpu="h100-sxm")
    assert "though the record says h200-sxm" in relabel.summary()

    with pytest.raises(InputError, match="did you mean"):
        import_probe(write(tmp_path, "typo.json", record("h100-sxn")), catalog)
    with pytest.raises(InputError, match="CPU"):
        import_probe(write(tmp_path, "cpu.json", record("h100-sxm", kind="cpu")), catalog)
    incomplete = {**record("b200-sxm"), "complete": False, "interrupted": True}
    assert "incomplete" in import_probe(write(tmp_path, "i.json", incomplete), catalog).summary()
    assert sorted(p.name for p in (home / "probes").iterdir()) == ["b200-sxm.json",
                                                                    "h100-sxm.json"]


def test_damaged_store_entry_is_skipped_with_a_line_naming_it(tmp_path, home, catalog) -> None:
    import_probe(write(tmp_path, "ok.json", record("h200-sxm")), catalog)
    (home / "probes" / "l4.json").write_text("{")
    skipped: list[str] = []
    stored = stored_probes(on_skip=skipped.append)
    assert list(stored) == ["h200-sxm"]  # the sound entry is still used
    [line] = skipped
    assert "l4.json" in line and "not valid JSON" in line and "skipped" in line
    assert "\n" not in line


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                 lambda kids: st.lists(kids, max_size=3)
                 | st.dictionaries(st.text(max_size=8), kids, max_size=3),
                 max_leaves=10).map(lambda v: json.dumps(v).encode()),
))
def test_garbage_records_give_one_line_and_store_nothing(tmp_path, home, catalog,
                                                         data: bytes) -> None:
    src = tmp_path / "garbage.json"
    src.write_bytes(data)
    with pytest.raises(InputError) as exc:
        import_probe(src, catalog)
    assert "garbage.json" in exc.value.one_line() and "\n" not in exc.value.one_line()
    assert not (home / "probes").exists()


# --- every field that changes speed, one at a time, on version 2 records

def full_record(catalog_id: str = "h100-sxm", kind: str = "cuda") -> dict:
    """A version 2 record with the whole stamp that `python -m probes run` writes."""
    data = record(catalog_id, kind)
    data["version"] = 2
    data["stamp"]["versions"].update({
        "torch_local": None, "torch_git": "abc123", "driver": "580.65.06", "cublas": "12.9.1",
        "nccl": "2.27.3", "flash_attn_3": "3.0.0b1", "flash_attn_4": "4.0.0b36",
        "flash_attn_cute": None, "cute_dsl": "4.8.1", "transformer_engine": "2.6.0",
        "triton": "3.4.0", "aiter": None,
    })
    data["stamp"].update({
        "clocks": {"sm_max_mhz": 1980.0, "sm_app_mhz": 1980.0, "mem_app_mhz": 2619.0,
                   "sm_app_default_mhz": 1980.0, "app_clocks_default": True,
                   "clock_setting_limits": False},
        "power_limit_w": 700.0,
        "power": {"limit_w": 700.0, "default_limit_w": 700.0, "at_default": True},
        "pcie": {"gen": 5, "width": 16, "max_gen": 5, "max_width": 16, "source": "nvml"},
        "ecc": {"enabled": True, "pending": True},
        "mig": {"enabled": False, "pending": False},
        "env": {"PYTORCH_TUNABLEOP_ENABLED": "0"},
        "torch_settings": {"cuda_matmul_allow_tf32": False,
                           "float32_matmul_precision": "highest"},
        "probe": {"version": "2.0.0", "code": "0123456789abcdef"},
        "run": {"preset": "default", "mode": "quick", "budget_s": {"bf16": 28.0, "fp8": 22.0}},
    })
    return data


def _set(data: dict, path: str, value: Any) -> dict:
    node = data
    *parents, last = path.split(".")
    for key in parents:
        node = node.setdefault(key, {})
    if value is _DELETE:
        node.pop(last, None)
    else:
        node[last] = value
    return data


_DELETE = object()

# (field as the warning names it, where it lives in the record, the other box's value)
FIELD_CASES = [
    ("torch", "stamp.versions.torch", "2.8.0+cu128"),
    ("torch local build", "stamp.versions.torch", "2.7.1+cu130"),
    ("torch commit", "stamp.versions.torch_git", "def456"),
    ("driver", "stamp.versions.driver", "570.124.06"),
    ("cuda", "stamp.versions.cuda", "13.0"),
    ("cudnn", "stamp.versions.cudnn", "9.10.2"),
    ("cublas", "stamp.versions.cublas", "13.0.2"),
    ("nccl", "stamp.versions.nccl", "2.26.2"),
    ("flash_attn", "stamp.versions.flash_attn", "2.8.3"),
    ("flash_attn_3", "stamp.versions.flash_attn_3", None),
    ("flash_attn_4", "stamp.versions.flash_attn_4", "4.0.0b20"),
    ("flash_attn_cute", "stamp.versions.flash_attn_cute", "0.0.1"),
    ("cute_dsl", "stamp.versions.cute_dsl", "4.9.0"),
    ("transformer_engine", "stamp.versions.transformer_engine", "2.7.0"),
    ("triton", "stamp.versions.triton", "3.5.0"),
    ("power limit (W)", "stamp.power.limit_w", 600.0),
    ("power limit at default", "stamp.power.at_default", False),
    ("application clocks at default", "stamp.clocks.app_clocks_default", False),
    ("SM application clock (MHz)", "stamp.clocks.sm_app_mhz", 1755.0),
    ("memory application clock (MHz)", "stamp.clocks.mem_app_mhz", 1593.0),
    ("SM max clock (MHz)", "stamp.clocks.sm_max_mhz", 1755.0),
    ("clocks held by a clock setting", "stamp.clocks.clock_setting_limits", True),
    ("ECC", "stamp.ecc.enabled", False),
    ("MIG", "stamp.mig.enabled", True),
    ("PCIe link", "stamp.pcie.max_gen", 4),
    ("run mode", "stamp.run.mode", "exhaustive"),
    ("run preset", "stamp.run.preset", "full"),
    ("run budget (s per dtype)", "stamp.run.budget_s", {"bf16": 60.0}),
    ("env PYTORCH_TUNABLEOP_ENABLED", "stamp.env.PYTORCH_TUNABLEOP_ENABLED", "1"),
    ("env NVIDIA_TF32_OVERRIDE", "stamp.env.NVIDIA_TF32_OVERRIDE", "0"),
    ("env CUBLAS_WORKSPACE_CONFIG", "stamp.env.CUBLAS_WORKSPACE_CONFIG", ":4096:8"),
    ("env TORCH_BLAS_PREFER_CUBLASLT", "stamp.env.TORCH_BLAS_PREFER_CUBLASLT", "1"),
    ("env TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT",
     "stamp.env.TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT", "100"),
    ("torch setting cuda_matmul_allow_tf32", "stamp.torch_settings.cuda_matmul_allow_tf32", True),
    ("probe code", "stamp.probe.code", "fedcba9876543210"),
]


@pytest.mark.parametrize(("field", "path", "value"), FIELD_CASES, ids=[c[0] for c in FIELD_CASES])
def test_each_speed_field_is_compared_and_named(field: str, path: str, value: Any) -> None:
    a = parse_probe_record(full_record("h100-sxm"), "a")
    b = parse_probe_record(_set(full_record("h100-sxm"), path, value), "b")
    drift = stack_drift({"new h100-sxm": b, "previous h100-sxm": a})
    assert [d.field for d in drift] == [field]
    text = drift_warning(drift)
    assert field in text.splitlines()[0] and f"  {drift[0].line()}" in text


@pytest.mark.parametrize(("field", "path", "value"), [
    ("hip", "stamp.versions.hip", "7.0"),
    ("aiter", "stamp.versions.aiter", "0.1.7"),
    ("driver", "stamp.versions.driver", "6.14.14"),
])
def test_rocm_fields_are_compared(field: str, path: str, value: Any) -> None:
    a = parse_probe_record(full_record("mi300x", "rocm"), "a")
    b = parse_probe_record(_set(full_record("mi300x", "rocm"), path, value), "b")
    assert [d.field for d in stack_drift({"a": a, "b": b})] == [field]


def test_identical_full_stamps_do_not_drift() -> None:
    a = parse_probe_record(full_record("h100-sxm"), "a")
    assert stack_drift({"a": a, "b": parse_probe_record(full_record("h100-sxm"), "b")}) == []


def test_hardware_limits_compare_within_a_model_and_defaults_across() -> None:
    h100 = full_record("h100-sxm")
    b200 = _set(_set(full_record("b200-sxm"), "stamp.power.limit_w", 1000.0),
                "stamp.clocks.sm_max_mhz", 1965.0)
    b200["stamp"]["pcie"]["max_gen"] = 6
    a, b = parse_probe_record(h100, "a"), parse_probe_record(b200, "b")
    assert stack_drift({"h100": a, "b200": b}) == []  # each at its own default: no drift
    capped = parse_probe_record(_set(b200, "stamp.power.at_default", False), "capped")
    assert [d.field for d in stack_drift({"h100": a, "b200": capped})] == [
        "power limit at default"
    ]


def test_version_1_records_are_not_blamed_for_fields_they_never_wrote() -> None:
    old = parse_probe_record(record("h100-sxm", torch="2.7.1+cu128", nccl="2.27.3",
                                    driver="580.65.06"), "old")
    assert old.version == 1
    new = parse_probe_record(full_record("h100-sxm"), "new")
    drift = {d.field: d for d in stack_drift({"old": old, "new": new})}
    # cuBLAS, CuTe DSL, clocks, ECC and the env were not recorded in version 1: unknown.
    # flash-attn 3 and Transformer Engine were recorded (not installed there): a real difference.
    assert set(drift) == {"flash_attn_3", "transformer_engine", "probe code"}
    assert drift["probe code"].line() == (
        "probe code: version 1 probe (old), 2.0.0 (0123456789abcdef) (new)"
    )


# --- a store that cannot be poisoned --------------------------------------------------------

from advisor.core.comparison import decide  # noqa: E402
from advisor.core.model.answers import parse_answers  # noqa: E402
from advisor.io.probe_store import probes_for  # noqa: E402


def _full_record(gpu: str = "h200-sxm", **figures: float) -> dict:
    r = record(gpu)
    r["matmul"][0]["mamf_tflops"] = figures.get("mamf", 700.0)
    r["attention"] = [{"status": "ok", "backend": "sdpa", "seq_len": 8192, "head_dim": 128,
                       "heads": 32, "kv_heads": 8, "batch": 1, "causal": True,
                       "direction": "fwd_bwd", "tflops_median": figures.get("attn", 400.0)}]
    r["bandwidth"] = [{"status": "ok", "kind": "d2d", "bytes": 1 << 30,
                       "gbps_median": figures.get("d2d", 4000.0)},
                      {"status": "ok", "kind": "h2d", "bytes": 1 << 28,
                       "gbps_median": figures.get("h2d", 50.0)}]
    r["collectives"] = [{"status": "ok", "backend": "nccl", "world_size": 8, "bytes": 1 << 28,
                         "busbw_gbps": figures.get("busbw", 350.0)}]
    return r


def _decide_with_the_store(catalog) -> None:
    answers = parse_answers({"current": "h200-sxm", "targets": ["b200-sxm", "h100-sxm"],
                             "workload": {"model": "llama-3.1-8b", "seq_lens": [8192],
                                          "token_budget": 1e10},
                             "prices": {"h200-sxm": 3.5}})
    probes = probes_for(["h200-sxm", "b200-sxm", "h100-sxm"], catalog)
    decision = decide(answers, catalog, probes)
    assert decision.targets and all(t.verdict for t in decision.targets)


POISON = {
    # the audit's records: each was accepted and then broke every later `decide`
    **{f"{fig}={v}": (fig, v) for fig in ("mamf", "attn", "d2d", "h2d", "busbw")
       for v in (-5.0, 0.0, float("nan"), float("inf"), 1e308)},
}


@pytest.mark.parametrize("case", sorted(POISON))
def test_a_poisoned_figure_is_refused_at_import_and_decide_still_works(
        case: str, tmp_path, home, catalog) -> None:
    fig, value = POISON[case]
    path = tmp_path / "poison.json"
    path.write_text(json.dumps(_full_record(**{fig: value})))  # NaN/inf as JSON's NaN/Infinity
    with pytest.raises(InputError) as exc:
        import_probe(path, catalog)
    line = exc.value.one_line()
    assert line.startswith(str(path)) and "\n" not in line
    assert not (home / "probes" / "h200-sxm.json").exists()
    _decide_with_the_store(catalog)


@pytest.mark.parametrize("bytes_of", ["bom", "crlf"], ids=["utf8-bom", "crlf"])
def test_harmless_encodings_import_and_read_back_the_same(bytes_of, tmp_path, home,
                                                          catalog) -> None:
    text = json.dumps(_full_record(), indent=1)
    data = (b"\xef\xbb\xbf" + text.encode()) if bytes_of == "bom" else text.replace(
        "\n", "\r\n").encode()
    path = tmp_path / "r.json"
    path.write_bytes(data)
    done = import_probe(path, catalog)
    assert done.path.read_bytes() == data  # stored as measured...
    assert stored_probes(on_skip=pytest.fail)["h200-sxm"] == done.record  # ...read back equal
    _decide_with_the_store(catalog)


def test_a_non_utf8_record_is_refused_without_quoting_it(tmp_path, home, catalog) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(json.dumps(_full_record()).replace("box-", "b\u00ffx-").encode("latin-1"))
    with pytest.raises(InputError, match=r"not UTF-8 text \(invalid byte at offset \d+\)"):
        import_probe(path, catalog)
    _decide_with_the_store(catalog)


def test_a_file_that_is_not_a_record_is_named_not_quoted(tmp_path, home, catalog) -> None:
    shadow = tmp_path / "shadow"
    shadow.write_text("root:$6$s3cr3t:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n")
    with pytest.raises(InputError) as exc:
        import_probe(shadow, catalog)
    line = exc.value.one_line()
    assert str(shadow) in line and "not valid JSON" in line and "line 1" in line
    assert "root" not in line.replace(str(shadow), "") and "s3cr3t" not in line
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "hunter2", "password": "hunter2"}))
    with pytest.raises(InputError) as exc:
        import_probe(other, catalog)
    assert "hunter2" not in exc.value.one_line() and "not a probe record" in exc.value.one_line()


@pytest.mark.parametrize("damage", [b"\xef\xbb\xbf{", b"{\"schema\": 1", b"\xff\xfe", b"",
                                    b"[" * 5000, json.dumps(_full_record(mamf=-5.0)).encode()])
def test_a_store_entry_damaged_after_import_is_skipped_and_decide_still_works(
        damage: bytes, tmp_path, home, catalog, capsys) -> None:
    import_probe(write(tmp_path, "b200.json", _full_record("b200-sxm")), catalog)
    (home / "probes" / "h200-sxm.json").write_bytes(damage)  # edited by hand, or worse
    _decide_with_the_store(catalog)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "h200-sxm.json" in err[0] and "skipped" in err[0]
    assert set(stored_probes(on_skip=None)) == {"b200-sxm"}


# --- the workload probe's section

def workload_run(layers: int, step_ms: float, attention: float, gemm: float) -> dict:
    other = 1 - attention - gemm
    return {
        "layers": layers, "status": "ok", "steps_ms": [step_ms, step_ms], "steps_timed": 2,
        "step_ms_median": step_ms, "step_ms_min": step_ms, "step_ms_max": step_ms,
        "spread_pct": 0.0, "tokens_per_step": 8192, "tokens_per_s": 8192 / (step_ms / 1e3),
        "peak_memory_gib": 20.0 + 5 * layers,
        "split": {"attention_ms": attention * step_ms, "gemm_ms": gemm * step_ms,
                  "other_ms": other * step_ms, "attention_share": attention,
                  "gemm_share": gemm, "other_share": other, "profiled_steps": 2},
    }


def workload_record(catalog_id: str = "h200-sxm") -> dict:
    """A GPU record as `python -m probes workload` writes it (figures made up, not measured)."""
    data = full_record(catalog_id)
    data["matmul"] = []
    data["stamp"]["run"] = {"preset": "workload", "mode": "train", "toy_sizes": False,
                            "budget_s": 40.0}
    shape = {"name": "llama-3.1-8b", "hidden": 4096, "layers": 32, "heads": 32, "kv_heads": 8,
             "head_dim": 128, "ffn": 14336, "vocab": 128256}
    data["workload"] = {
        "status": "ok", "mode": "train", "shape": shape, "shape_run": shape,
        "toy_sizes": False, "device": "cuda", "device_name": "NVIDIA H200",
        "layers_total": 32, "layers_run": [1, 4], "seq_len": 8192, "seq_len_run": 8192,
        "micro_batch": 1, "micro_batch_run": 1, "precision_requested": "bf16",
        "precision": "bf16", "attention_kernel_requested": "auto", "attention_kernel": "sdpa",
        "phases": [{
            "phase": "train", "tokens_per_step": 8192,
            "runs": [workload_run(1, 100.0, 0.05, 0.6), workload_run(4, 220.0, 0.1, 0.7)],
            "per_layer": {"step_ms": 40.0, "attention_ms": 5.67, "gemm_ms": 31.33,
                          "other_ms": 3.0, "peak_memory_gib": 5.0},
            "outside_layers": {"step_ms": 60.0, "attention_ms": 0.0, "gemm_ms": 28.67,
                               "other_ms": 32.0, "peak_memory_gib": 20.0},
            "full_model": {"layers": 32, "extrapolated": True, "step_ms": 1340.0,
                           "tokens_per_s": 6113.4, "peak_memory_gib": 180.0,
                           "attention_share": 0.135, "gemm_share": 0.77, "other_share": 0.095},
        }],
    }
    return data


def test_a_workload_record_is_kept_beside_the_suite_record(tmp_path, home, catalog) -> None:
    import_probe(write(tmp_path, "suite.json", full_record("h200-sxm")), catalog)
    done = import_probe(write(tmp_path, "w.json", workload_record()), catalog)
    assert done.path == home / "probes" / "h200-sxm.workload.json" and done.replaced is None
    assert done.drift == []  # same stack; the suite's run settings are not the workload's
    assert "imported workload probe record for h200-sxm" in done.summary()
    suite, kept = stored_probes()["h200-sxm"], stored_workloads()["h200-sxm"]
    assert suite.mamf("bf16") == 700.0 and suite.workload is None
    w = kept.measured_workload()
    assert w is not None and w.primary is not None and w.primary.full_model is not None
    assert w.primary.full_model.tokens_per_s == 6113.4 and w.phase("decode") is None
    again = import_probe(write(tmp_path, "w2.json", workload_record()), catalog)
    assert again.replaced is not None and set(stored_probes()) == {"h200-sxm"}
    drifted = workload_record()
    drifted["stamp"]["versions"]["torch"] = "2.8.0+cu128"
    fields = {d.field for d in import_probe(write(tmp_path, "w3.json", drifted), catalog).drift}
    assert "torch" in fields and not any(f.startswith("run ") for f in fields)


def test_records_without_a_workload_still_load() -> None:
    assert parse_probe_record(record(), "v1").measured_workload() is None
    assert parse_probe_record(full_record(), "v2").workload is None
    data = workload_record()
    data["workload"]["status"] = "failed"
    for run in data["workload"]["phases"][0]["runs"]:
        run.update(status="failed", steps_ms=[], steps_timed=0, step_ms_median=None,
                   tokens_per_s=None, split=None)
    assert parse_probe_record(data, "failed").measured_workload() is None


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("phases.0.runs.0.split.attention_share", 1.5,
         "field 'workload.phases.0.runs.0.split.attention_share', value 1.5: Input should be "
         "less than or equal to 1"),
        ("phases.0.runs.0.split.gemm_share", 0.9, "shares must add up to 1"),
        ("phases.0.runs.0.tokens_per_s", 1000.0, "tokens_per_s 1000.0 is not tokens_per_step"),
        ("phases.0.runs.1.step_ms_median", -5.0, "Input should be greater than or equal to 0.001"),
        ("phases.0.runs.0.steps_timed", 7, "steps_timed 7 but 2 steps_ms"),
        ("phases.0.full_model.other_share", None, "shares must add up to 1"),
        ("precision", "int4", "field 'workload.precision', value 'int4'"),
        ("shape.kv_heads", 7, "heads 32 is not a multiple of kv_heads 7"),
        ("phases.0.phase", "inference", "field 'workload.phases.0.phase', value 'inference'"),
        ("phases.0.per_layer.step_ms", float("inf"), "finite"),
    ],
)
def test_a_bad_workload_value_is_refused_in_one_line(tmp_path, home, catalog, path: str,
                                                     value: Any, message: str) -> None:
    data = workload_record()
    node: Any = data["workload"]
    *parents, last = path.split(".")
    for key in parents:
        node = node[int(key)] if key.isdigit() else node[key]
    node[last] = value
    if value == float("inf"):
        with pytest.raises(InputError) as exc:
            parse_probe_record(data, "w.json")
    else:
        with pytest.raises(InputError) as exc:
            import_probe(write(tmp_path, "w.json", data), catalog)
        assert not (home / "probes").exists()
    line = exc.value.one_line()
    assert "w.json" in line and message in line and "\n" not in line
