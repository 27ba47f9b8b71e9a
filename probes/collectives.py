"""All-reduce bus bandwidth under torchrun (NCCL/RCCL on GPUs, gloo on CPU).

Launched by torchrun, on one node or several; there is no home-made launcher:

    torchrun --standalone --nproc-per-node 8 -m probes collectives --out coll.json
    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d \\
        --rdzv-endpoint HOST:29500 -m probes collectives --out coll.json

Per size, every rank times each iteration; the slowest rank's time counts (an
all-reduce is done when its last rank is), algbw = bytes / time and
busbw = algbw·2(n−1)/n as in nccl-tests, which is the figure to set against the
link's unidirectional bandwidth.
"""

from __future__ import annotations

import os
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from probes.device import Device, synchronize
from probes.figures import CatalogGpu
from probes.timing import sig

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def bus_bandwidth(algbw: float, world_size: int) -> float:
    """nccl-tests' all-reduce correction: each byte crosses 2(n−1)/n links."""
    return algbw * 2 * (world_size - 1) / world_size


def parse_size(text: str) -> int:
    """'64K', '16M', '1G' (binary units) or plain bytes."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)I?B?\s*", text.upper())
    if not m:
        raise ValueError(f"not a size: {text!r} (use e.g. 64K, 16M, 1G)")
    return int(m.group(1)) * _UNITS[m.group(2)]


@dataclass(frozen=True)
class Topology:
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int

    @property
    def nodes(self) -> int:
        return max(1, self.world_size // max(1, self.local_world_size))


def topology_from_env(env: dict[str, str] | None = None) -> Topology:
    """torchrun's environment; a ValueError names the command when it is missing."""
    e = os.environ if env is None else env
    if "RANK" not in e or "WORLD_SIZE" not in e:
        raise ValueError(
            "collectives must be launched by torchrun, e.g. "
            "`torchrun --standalone --nproc-per-node 8 -m probes collectives --out coll.json`"
        )
    world = int(e["WORLD_SIZE"])
    return Topology(
        rank=int(e["RANK"]),
        world_size=world,
        local_rank=int(e.get("LOCAL_RANK", "0")),
        local_world_size=int(e.get("LOCAL_WORLD_SIZE", str(world))),
    )


def _entry(backend: str, topo: Topology, nbytes: int) -> dict[str, Any]:
    return {
        "op": "all_reduce",
        "backend": backend,
        "world_size": topo.world_size,
        "nodes": topo.nodes,
        "dtype": "fp32",
        "bytes": nbytes,
        "algbw_gbps": None,
        "busbw_gbps": None,
        "busbw_gbps_max": None,
        "catalog_gbps": None,
        "fraction": None,
        "status": "skipped",
        "reason": None,
    }


def all_reduce_sweep(
    device: Device,
    topo: Topology,
    backend: str,
    sizes: Sequence[int],
    warmup: int,
    iters: int,
    gpu: CatalogGpu | None,
) -> list[dict[str, Any]]:
    """Entries for each size; needs an initialised default process group."""
    import torch
    import torch.distributed as dist

    link = gpu.link_unidirectional_gbps if gpu is not None and topo.nodes == 1 else None
    entries = []
    for nbytes in sizes:
        entry = _entry(backend, topo, nbytes)
        entries.append(entry)
        if topo.world_size < 2:
            entry["reason"] = "one rank: nothing to reduce across"
            continue
        src = torch.randn(nbytes // 4, device=device.torch_device)
        buf = torch.empty_like(src)
        times = []
        for i in range(warmup + iters):
            buf.copy_(src)  # fresh random data each time; repeated sums would overflow to inf
            synchronize(device)
            t0 = time.perf_counter()
            dist.all_reduce(buf)
            synchronize(device)
            if i >= warmup:
                times.append(time.perf_counter() - t0)
        slowest = torch.tensor(times, dtype=torch.float64, device=device.torch_device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        per_iter = slowest.tolist()
        algbw = nbytes / statistics.median(per_iter) / 1e9
        busbw = bus_bandwidth(algbw, topo.world_size)
        entry.update(
            status="ok",
            algbw_gbps=sig(algbw),
            busbw_gbps=sig(busbw),
            busbw_gbps_max=sig(bus_bandwidth(nbytes / min(per_iter) / 1e9, topo.world_size)),
        )
        if link:
            entry.update(catalog_gbps=link, fraction=sig(busbw / link, 4))
        del src, buf
    return entries


def collectives_command(args: Any) -> int:
    """`python -m probes collectives` under torchrun; rank 0 writes the record."""
    import json
    import sys
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    from probes.device import detect
    from probes.figures import match_device
    from probes.record import new_record, read_record, write_record
    from probes.stamp import collect_stamp, gpu_identity

    try:
        topo = topology_from_env()
        backend = args.backend
        if backend == "auto":
            backend = "nccl" if torch.cuda.is_available() else "gloo"
        if backend == "nccl":
            torch.cuda.set_device(topo.local_rank)
            device = detect("rocm" if torch.version.hip else "cuda").at(topo.local_rank)
        else:
            device = detect("cpu")
        gpu_sizes = "1M,16M,256M,1G,4G"
        sizes = [
            parse_size(s)
            for s in (args.sizes or (gpu_sizes if device.is_gpu else "64K,1M,4M")).split(",")
        ]
        identity = gpu_identity(device)
        match = match_device(
            device, identity["capability"], identity["memory_gib"], args.catalog_id
        )
    except ValueError as exc:
        print(f"probes collectives: error: {exc}", file=sys.stderr)
        return 2
    iters = args.iters or (20 if device.is_gpu else 5)
    dist.init_process_group(backend, timeout=timedelta(seconds=args.timeout))
    try:
        entries = all_reduce_sweep(device, topo, backend, sizes, args.warmup, iters, match.gpu)
    finally:
        dist.destroy_process_group()
    if topo.rank != 0:
        return 0
    if args.merge and args.out:
        record = read_record(args.out)
    else:
        stamp = collect_stamp(device, identity, match, None, "not read by the collectives probe")
        settings = {
            "probe": "collectives",
            "backend": backend,
            "warmup": args.warmup,
            "iters": iters,
        }
        record = new_record(stamp, settings)
        record["complete"] = True
    record["collectives"] = entries
    if args.out:
        write_record(record, args.out)
        print(f"probes collectives: record written to {args.out}", file=sys.stderr)
    if args.json:
        print(json.dumps(record, indent=2))
    for e in entries:
        shown = (
            f"busbw {e['busbw_gbps']} GB/s (algbw {e['algbw_gbps']})"
            if e["status"] == "ok"
            else e["reason"]
        )
        print(f"all_reduce {e['bytes']} B x{e['world_size']} ({e['nodes']} node(s)): {shown}")
    return 0
