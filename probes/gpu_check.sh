#!/usr/bin/env bash
# One-shot GPU validation of the probes: fits in 10 minutes on one GPU.
#
#   OUT=/path/to/results bash probes/gpu_check.sh
#
# Run from a checkout (the GPU tests import advisor's record schema; they are skipped with
# a reason when pytest or advisor's dependencies are missing). Each step has its own
# timeout, writes its output to $OUT, and a failed step is recorded while the next still
# runs; the per-step limits add up to 9.5 minutes on one GPU (575 s):
#   1. the default suite (about 80 s on a datacenter GPU)             -> suite.json  (150 s)
#   2. bench_search over a GPU-sized space (1,000 shapes)              -> bench.txt   (200 s)
#   3. the GPU-marked tests                                            -> gpu_tests.out (110 s)
#   4. a 1-GPU all-reduce under torchrun (smoke test of the code path) -> coll1.json  (40 s)
#      and, on a multi-GPU box only, an all-reduce over every GPU      -> coll.json   (90 s)
#   5. the workload probe: Llama-3.1-8B training at 8k, micro-batch 1, bf16, 1 and 4
#      layers, 30 s of steps (planned about 48 s)                      -> workload.json (75 s)
# It ends with $OUT/summary.txt (and summary.json): bf16 and fp8 MAMF/MSMF with shapes,
# clocks and power, attention per kernel, HBM and host-link bandwidth, stage and suite
# times, the bench_search verdict, the workload's step times, tokens/s, memory and time
# split, and CHECK lines where a figure is far from what is published for the GPU (a
# bug to find, not a result).
set -u
PY="${PYTHON:-python}"
OUT=$(mkdir -p "${OUT:-gpu_check_out}" && cd "${OUT:-gpu_check_out}" && pwd)
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
: > "$OUT/steps.txt"
START=$(date +%s)

step() {  # step NAME TIMEOUT_S CMD...
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s)
  timeout --signal=INT --kill-after=15 "$limit" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  rc=$?
  echo "$name rc=$rc seconds=$(( $(date +%s) - start )) limit=$limit" | tee -a "$OUT/steps.txt"
}

{ nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,ECC,PCIE 2>/dev/null || rocm-smi 2>/dev/null || echo "no nvidia-smi/rocm-smi"; } \
  > "$OUT/smi.txt" 2>&1
# GPU_CHECK_ALLOW_CPU=1 runs the same steps on a CPU (toy sizes): a dry run of the script.
if [ "${GPU_CHECK_ALLOW_CPU:-0}" != 1 ] && \
    ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
    > "$OUT/torch.txt" 2>&1; then
  echo "gpu_check: torch sees no GPU here ($("$PY" -c 'import torch; print(torch.__version__)' 2>&1)); nothing to check" \
    | tee "$OUT/summary.txt"
  exit 2
fi
"$PY" -c "import torch; n = torch.cuda.device_count(); print(torch.__version__, torch.version.cuda, torch.version.hip, n, torch.cuda.get_device_name(0) if n else 'no GPU')" \
  > "$OUT/torch.txt" 2>&1
NGPU=$("$PY" -c "import torch; print(max(1, torch.cuda.device_count()))" 2>/dev/null || echo 1)

step suite 150 "$PY" -m probes run --out "$OUT/suite.json"
step bench 200 "$PY" -m probes.bench_search --dtype bf16
cp "$OUT/bench.out" "$OUT/bench.txt" 2>/dev/null
if "$PY" -c "import pytest, pydantic" 2>/dev/null; then
  step gpu_tests 110 "$PY" -m pytest -q -m gpu -p no:cacheprovider tests/probes/test_probes_gpu.py
else
  echo "gpu_tests skipped: pytest or pydantic is not installed" | tee -a "$OUT/steps.txt" > "$OUT/gpu_tests.out"
fi
TORCHRUN=(torchrun)
command -v torchrun > /dev/null || TORCHRUN=("$PY" -m torch.distributed.run)
step coll1 40 "${TORCHRUN[@]}" --standalone --nproc-per-node 1 -m probes collectives \
  --sizes 1M,64M --iters 5 --out "$OUT/coll1.json"
if [ "$NGPU" -gt 1 ]; then
  step coll 90 "${TORCHRUN[@]}" --standalone --nproc-per-node "$NGPU" -m probes collectives \
    --sizes 1M,64M,1G --iters 10 --out "$OUT/coll.json"
fi
# The H200->B200 guide's worked example (Llama-3.1-8B, 8k, micro-batch 1, bf16), on one GPU.
step workload 75 "$PY" -m probes workload --name llama-3.1-8b --hidden 4096 --layers 32 \
  --heads 32 --kv-heads 8 --ffn 14336 --vocab 128256 --seq-len 8192 --micro-batch 1 \
  --precision bf16 --budget 30 --out "$OUT/workload.json"
echo "total seconds=$(( $(date +%s) - START ))" >> "$OUT/steps.txt"

"$PY" - "$OUT" > "$OUT/summary.txt" 2>&1 <<'EOF'
import json
import sys
from pathlib import Path

out = Path(sys.argv[1])
summary: dict = {"steps": (out / "steps.txt").read_text().strip().splitlines()}
print("\n".join(summary["steps"]))


def load(name):
    path = out / name
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"\n{name}: no record ({exc})")
        return None


def shape(s):
    return "x".join(map(str, s)) if s else "-"


checks = []
r = load("suite.json")
if r is not None:
    d, v = r["stamp"]["device"], r["stamp"]["versions"]
    name = d["name"]
    print(f"\n== suite: {name} x{d['count']} catalog={d['catalog_id']} complete={r['complete']} "
          f"seconds={r['seconds_total']} (planned {r.get('estimate_s')})")
    print(f"stack: torch {v.get('torch')} cuda {v.get('cuda')} hip {v.get('hip')} cudnn "
          f"{v.get('cudnn')} cublas {v.get('cublas')} nccl {v.get('nccl')} driver "
          f"{v.get('driver')} flash_attn {v.get('flash_attn')} fa3 {v.get('flash_attn_3')} "
          f"fa4 {v.get('flash_attn_4')} cute_dsl {v.get('cute_dsl')}")
    st = r["stamp"]
    print(f"power {st.get('power')}; clocks {st.get('clocks')}; pcie {st.get('pcie')}; "
          f"ecc {st.get('ecc')}; mig {st.get('mig')}; env {st.get('env')}")
    for s in r.get("stages", []):
        print(f"stage {s['name']}: {s['status']}, {s['seconds']} s (planned {s['estimate_s']})")
    mm = {}
    for m in r["matmul"]:
        state = m.get("msmf_state") or {}
        mm[m["dtype"]] = {k: m.get(k) for k in (
            "status", "mamf_tflops", "mamf_peak_tflops", "mamf_shape", "mamf_clock_mhz",
            "mamf_power_w",
            "msmf_tflops", "msmf_shape", "msmf_spread_pct", "shapes_tried", "seconds",
            "efficiency", "verdict", "reason")}
        mm[m["dtype"]]["msmf_clock_mhz"] = state.get("sm_clock_mhz_median")
        mm[m["dtype"]]["msmf_power_w"] = state.get("power_w_median")
        if m["status"] != "ok":
            print(f"matmul {m['dtype']}: {m['status']}: {m['reason']}")
            continue
        print(f"matmul {m['dtype']}: MAMF {m['mamf_tflops']} TFLOPS (burst, peak "
              f"{m['mamf_peak_tflops']}) at {shape(m['mamf_shape'])} {m['mamf_clock_mhz']} MHz "
              f"{m.get('mamf_power_w')} W; "
              f"MSMF {m['msmf_tflops']} at {shape(m['msmf_shape'])} spread "
              f"{m['msmf_spread_pct']}% {state.get('sm_clock_mhz_median')} MHz "
              f"{state.get('power_w_median')} W; {m['shapes_tried']} shapes "
              f"({(m.get('search') or {}).get('stopped_by')}) in {m['seconds']} s; "
              f"eff {m['efficiency']} | {m['verdict'] or m['reason']}")
    summary["matmul"] = mm
    kernels: dict = {}
    for a in r["attention"]:
        key = f"{a.get('kernel') or a['backend']} d={a['head_dim']} {'causal' if a['causal'] else 'full'} {a['direction']}"
        cell = a["tflops_median"] if a["status"] == "ok" else a["status"]
        kernels.setdefault(key, []).append(f"{a['seq_len']}:{cell}")
    print("\nattention TFLOPS per kernel (seq_len:value):")
    for key, cells in kernels.items():
        print(f"  {key}: {' '.join(map(str, cells))}")
    summary["attention"] = kernels
    bw = {b["kind"]: b for b in r["bandwidth"]}
    for kind, b in bw.items():
        print(f"bandwidth {kind}: {b['gbps_median']} GB/s (max {b['gbps_max']}, buffer "
              f"{(b.get('buffer_bytes') or 0) / 2**20:.0f} MiB) fraction={b['fraction']} "
              f"{b['reason'] or ''}")
    summary["bandwidth"] = {k: b["gbps_median"] for k, b in bw.items()}
    h = r.get("node_health") or {}
    print(f"health {h.get('status')}: throttling={h.get('throttling')} power_capped="
          f"{h.get('power_capped_gpus')} warnings={h.get('warnings')}")
    print("notes:", r.get("notes"))
    # What is published for the GPU; a figure far from it is a bug to find, not a result.
    if "H200" in name:
        bf16 = (mm.get("bf16") or {}).get("mamf_tflops")
        d2d = (bw.get("d2d") or {}).get("gbps_median")
        if bf16 is None or not 750 <= bf16 <= 800 * 1.05:
            checks.append(f"CHECK: H200 bf16 MAMF {bf16} TFLOPS, expected about 750-800")
        if d2d is None or not 4000 <= d2d <= 4300 * 1.05:
            checks.append(f"CHECK: H200 d2d copy {d2d} GB/s, expected about 4000-4300")
    for m in r["matmul"]:
        eff = m.get("efficiency")
        if eff is not None and not 0.5 <= eff <= 1.0:
            checks.append(f"CHECK: {m['dtype']} MAMF is {eff:.0%} of the catalog peak")
for name in ("coll1.json", "coll.json"):
    if (out / name).exists() and (c := load(name)) is not None:
        for e in c["collectives"]:
            print(f"{name}: all_reduce {e['bytes']} B x{e['world_size']}: {e['status']} "
                  f"busbw={e['busbw_gbps']} skew={e.get('rank_skew_pct')}% {e['reason'] or ''}")
w = load("workload.json")
if w is not None and w.get("workload"):
    wl = w["workload"]
    print(f"\n== workload: {wl['status']} in {w['seconds_total']} s (planned {w.get('estimate_s')}); "
          f"layers {wl['layers_run']} of {wl['layers_total']}, seq {wl['seq_len_run']}, "
          f"mb {wl['micro_batch_run']}, {wl['precision']}, attention {wl['attention_kernel']} "
          f"{wl['attention_ops']}")
    summary["workload"] = {}
    for ph in wl["phases"]:
        for r in ph["runs"]:
            print(f"{ph['phase']} {r['layers']} layers: {r['status']} {r['step_ms_median']} ms "
                  f"(spread {r['spread_pct']}%, {r['steps_timed']} steps) {r['tokens_per_s']} tok/s "
                  f"peak {r['peak_memory_gib']} GiB (reserved {r['peak_reserved_gib']}) "
                  f"split {r['split']} gpu {r['gpu_state']} {r['reason'] or ''}")
        full, per = ph["full_model"], ph["per_layer"]
        print(f"{ph['phase']} per layer {per}; outside {ph['outside_layers']}; whole {full}; "
              f"{ph['reason'] or ''}")
        summary["workload"][ph["phase"]] = {"per_layer": per, "full_model": full}
        s = wl["shape_run"]
        if ph["phase"] == "train" and full:
            # model FLOPs: 6·N per token (dense_N as the guide: layers + LM head) + causal
            # attention 6·s·d·h·L per token (the guide's 6·s²·d·h·L per sequence)
            per_layer_n = s["hidden"] * s["head_dim"] * (2 * s["heads"] + 2 * s["kv_heads"]) \
                + 3 * s["hidden"] * s["ffn"]
            n = s["layers"] * per_layer_n + s["vocab"] * s["hidden"]
            seq = wl["seq_len_run"]
            flops = 6 * n + 6 * seq * s["head_dim"] * s["heads"] * s["layers"]
            tflops = full["tokens_per_s"] * flops / 1e12
            print(f"train whole model: {tflops:.0f} model TFLOPS on one GPU")
            summary["workload"]["model_tflops"] = round(tflops, 1)
            if not 100 <= tflops <= 1000:
                checks.append(f"CHECK: workload at {tflops:.0f} model TFLOPS, outside 100-1000")
            share = full.get("attention_share")
            if share is not None and not 0.05 <= share <= 0.30:
                checks.append(f"CHECK: workload attention share {share:.0%} at 8k; the guide "
                              "measured ~12% of the step")
    if wl["status"] != "ok":
        checks.append(f"CHECK: workload status {wl['status']}")
    print("notes:", wl["notes"])
bench = (out / "bench.txt").read_text().strip().splitlines() if (out / "bench.txt").exists() else []
print("\n== bench_search\n" + "\n".join(bench[-9:]))
summary["bench"] = bench[-1:] if bench else None
tests = (out / "gpu_tests.out").read_text().strip().splitlines() if (out / "gpu_tests.out").exists() else []
print("\n== gpu tests: " + (tests[-1] if tests else "no output"))
summary["gpu_tests"] = tests[-1] if tests else None
summary["checks"] = checks
print("\n" + ("\n".join(checks) if checks else "no CHECK flags"))
(out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
EOF
cat "$OUT/summary.txt"
