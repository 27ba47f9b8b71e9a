#!/usr/bin/env bash
# One-shot GPU validation of the probes, for a session that has a GPU (about 6-8 minutes).
#
#   OUT=/path/to/results bash probes/gpu_check.sh
#
# Runs, each under its own timeout, writing JSON and logs to $OUT:
#   1. the default suite (target: at most 90 s on a datacenter GPU)   -> suite.json
#   2. node health on every local GPU, with NVML telemetry if present -> health.json
#   3. bench_search: quick search vs a CI-sized exhaustive grid       -> bench.txt
#   4. the GPU-marked tests                                           -> gpu_tests.out
#   5. all-reduce under torchrun over the local GPUs (NCCL/RCCL)      -> coll.json
# and ends with $OUT/summary.txt. A failed step is recorded and the next one still runs.
set -u
PY="${PYTHON:-python}"
OUT=$(mkdir -p "${OUT:-gpu_check_out}" && cd "${OUT:-gpu_check_out}" && pwd)
cd "$(dirname "$0")/.."
: > "$OUT/steps.txt"

step() {  # step NAME TIMEOUT_S CMD...
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s)
  timeout "$limit" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  rc=$?
  echo "$name rc=$rc seconds=$(( $(date +%s) - start ))" | tee -a "$OUT/steps.txt"
}

{ nvidia-smi || rocm-smi; } > "$OUT/smi.txt" 2>&1
"$PY" -c "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip, torch.cuda.device_count())" \
  > "$OUT/torch.txt" 2>&1
NGPU=$("$PY" -c "import torch; print(max(1, torch.cuda.device_count()))" 2>/dev/null || echo 1)

step suite 180 "$PY" -m probes run --out "$OUT/suite.json"
step health 120 "$PY" -m probes run --only matmul,health --health --budget 5 --out "$OUT/health.json"
step bench 330 "$PY" -m probes.bench_search
cp "$OUT/bench.out" "$OUT/bench.txt"
step gpu_tests 150 "$PY" -m pytest -q -m gpu tests/probes/test_probes_gpu.py
step coll 150 torchrun --standalone --nproc-per-node "$NGPU" -m probes collectives \
  --sizes 1M,64M,1G --iters 10 --out "$OUT/coll.json"

"$PY" - "$OUT" > "$OUT/summary.txt" 2>&1 <<'EOF'
import json, sys
from pathlib import Path

out = Path(sys.argv[1])
print(open(out / "steps.txt").read().strip())
for name in ("suite", "health", "coll"):
    path = out / f"{name}.json"
    if not path.exists():
        print(f"{name}: no record")
        continue
    r = json.loads(path.read_text())
    d = r["stamp"]["device"]
    print(f"\n== {name}: {d['name']} x{d['count']} catalog={d['catalog_id']} "
          f"complete={r['complete']} seconds={r['seconds_total']}")
    for m in r["matmul"]:
        print(f"matmul {m['dtype']} {m['status']}: mamf={m['mamf_tflops']} median={m['median_tflops']} "
              f"shape={m['best_shape']} shapes={m['shapes_tried']} s={m['seconds']} "
              f"eff={m['efficiency']} | {m['verdict'] or m['reason']}")
    for a in r["attention"]:
        print(f"attn {a['backend']} s={a['seq_len']} d={a['head_dim']} causal={a['causal']} "
              f"{a['direction']}: {a['tflops_median']} {a['reason'] or ''}")
    for b in r["bandwidth"]:
        print(f"bw {b['kind']}: {b['gbps_median']} GB/s fraction={b['fraction']} {b['reason'] or ''}")
    for c in r["collectives"]:
        print(f"allreduce {c['bytes']}B x{c['world_size']}: busbw={c['busbw_gbps']} {c['reason'] or ''}")
    h = r.get("node_health") or {}
    print(f"health {h.get('status')}: spread={h.get('spread')} slowest={h.get('slowest_index')} "
          f"throttling={h.get('throttling')} warnings={h.get('warnings')}")
    print("notes:", r.get("notes"), "| versions:", r["stamp"]["versions"])
bench = (out / "bench.txt").read_text().strip().splitlines() if (out / "bench.txt").exists() else []
print("\n== bench_search\n" + "\n".join(bench[-8:]))
tests = (out / "gpu_tests.out").read_text().strip().splitlines()
print("\n== gpu tests: " + (tests[-1] if tests else "no output"))
EOF
cat "$OUT/summary.txt"
