"""All-reduce bus bandwidth under torchrun (NCCL/RCCL on GPUs, gloo on CPU).

Launched by torchrun, on one node or several; there is no home-made launcher:

    torchrun --standalone --nproc-per-node 8 -m probes collectives --out coll.json
    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d \\
        --rdzv-endpoint HOST:29500 -m probes collectives --out coll.json

Timing follows nccl-tests and ml-engineering's all_reduce_bench.py: a barrier
before every iteration so all ranks start together, each rank times its own call
(CUDA events around the all-reduce on GPUs, the host clock on gloo), and an
iteration's time is the mean over ranks (all_reduce_bench averages the ranks'
algbw; nccl-tests averages their times). Taking the slowest rank instead would
add every rank's launch skew to small messages and read them low.
algbw = bytes / time and busbw = algbw·2(n−1)/n as in nccl-tests, the figure to
set against a link's unidirectional bandwidth.

With --merge the results go into an existing record, which is read and whose
stamp is compared with this run's before anything is measured: a record from
another stack is refused, naming the fields that differ, unless --force.
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .device import Device, synchronize
from .figures import CatalogGpu
from .timing import sig

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def bus_bandwidth(algbw: float, world_size: int) -> float:
    """nccl-tests' all-reduce correction: each byte crosses 2(n−1)/n links."""
    return algbw * 2 * (world_size - 1) / world_size


def parse_size(text: str) -> int:
    """'64K', '16M', '1G' (binary units) or plain bytes."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)I?B?\s*", text.upper())
    if not m:
        raise ValueError(f"not a size: {text!r} (use e.g. 64K, 16M, 1G)")
    value = int(m.group(1)) * _UNITS[m.group(2)]
    if not 4 <= value <= 64 * 2**30:
        raise ValueError(f"size {text!r} must be between 4 bytes and 64G")
    return value


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
    try:
        world = int(e["WORLD_SIZE"])
        return Topology(
            rank=int(e["RANK"]),
            world_size=world,
            local_rank=int(e.get("LOCAL_RANK", "0")),
            local_world_size=int(e.get("LOCAL_WORLD_SIZE", str(world))),
        )
    except ValueError:
        raise ValueError("torchrun's RANK/WORLD_SIZE/LOCAL_RANK are not integers") from None


def _entry(backend: str, topo: Topology, nbytes: int) -> dict[str, Any]:
    return {
        "op": "all_reduce",
        "backend": backend,
        "world_size": topo.world_size,
        "nodes": topo.nodes,
        "dtype": "fp32",
        "bytes": nbytes,
        "iterations": 0,
        "algbw_gbps": None,
        "busbw_gbps": None,
        "busbw_gbps_max": None,
        "rank_skew_pct": None,
        "catalog_gbps": None,
        "fraction": None,
        "status": "skipped",
        "reason": None,
    }


def summarize_times(per_rank: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    """Per iteration: the mean over ranks (the figure) and the max (the skew it would add)."""
    iters = list(zip(*per_rank, strict=True))
    return [statistics.fmean(t) for t in iters], [max(t) for t in iters]


def all_reduce_sweep(
    device: Device,
    topo: Topology,
    backend: str,
    sizes: Sequence[int],
    warmup: int,
    iters: int,
    gpu: CatalogGpu | None,
    should_stop: Any = None,
) -> list[dict[str, Any]]:
    """Entries for each size; needs an initialised default process group."""
    import torch
    import torch.distributed as dist

    link = gpu.link_unidirectional_gbps if gpu is not None and topo.nodes == 1 else None
    entries = []
    for nbytes in sizes:
        if should_stop is not None and should_stop():
            break
        entry = _entry(backend, topo, nbytes)
        entries.append(entry)
        src = torch.randn(nbytes // 4, device=device.torch_device)
        buf = torch.empty_like(src)
        times = []
        for i in range(warmup + iters):
            buf.copy_(src)  # fresh random data each time; repeated sums would overflow to inf
            synchronize(device)
            dist.barrier()
            if device.is_gpu:
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                dist.all_reduce(buf)
                end.record()
                torch.cuda.synchronize(device.index)
                seconds = start.elapsed_time(end) / 1e3
            else:
                t0 = time.perf_counter()
                dist.all_reduce(buf)
                seconds = time.perf_counter() - t0
            if i >= warmup:
                times.append(seconds)
        # Every rank's times to every rank: sum (for the mean) and max (for the skew).
        mine = torch.tensor(times, dtype=torch.float64, device=device.torch_device)
        total, slowest = mine.clone(), mine.clone()
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        mean_t = [t / topo.world_size for t in total.tolist()]
        max_t = slowest.tolist()
        entry["iterations"] = len(mean_t)
        median = statistics.median(mean_t)
        if topo.world_size < 2:
            entry["reason"] = (
                f"one rank: nothing crosses a link, so there is no bus bandwidth; the timed call "
                f"({median * 1e6:.0f} us) only checks the code path"
            )
            del src, buf
            continue
        algbw = nbytes / median / 1e9
        busbw = bus_bandwidth(algbw, topo.world_size)
        entry.update(
            status="ok",
            algbw_gbps=sig(algbw),
            busbw_gbps=sig(busbw),
            busbw_gbps_max=sig(bus_bandwidth(nbytes / min(mean_t) / 1e9, topo.world_size)),
            rank_skew_pct=round((statistics.median(max_t) / median - 1) * 100, 2),
        )
        if link:
            entry.update(catalog_gbps=link, fraction=sig(busbw / link, 4))
        del src, buf
    return entries


def _say(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"probes collectives: {message}", file=sys.stderr, flush=True)


def collectives_command(args: Any) -> int:
    """`python -m probes collectives` under torchrun; rank 0 writes the record."""
    import json
    from datetime import timedelta

    from .interrupts import EXIT_INTERRUPTED, FINISHING, MEASURING, command_scope
    from .output import OutputError, check_target, save_record_text
    from .record import new_record, read_record, stamp_differences, to_json

    with command_scope("probes collectives") as interrupts:
        try:
            topo = topology_from_env()
            sizes_text = args.sizes
            target = check_target(args.out) if args.out and topo.rank == 0 else None
            if args.merge and not args.out:
                raise ValueError("--merge needs --out, the record to merge into")
            if args.iters is not None and not 1 <= args.iters <= 10000:
                raise ValueError("--iters takes 1 to 10000")
            if not 0 <= args.warmup <= 1000:
                raise ValueError("--warmup takes 0 to 1000")
            existing = read_record(args.out) if args.merge and topo.rank == 0 else None
        except (ValueError, OutputError) as exc:  # RecordError is a ValueError
            _say(f"error: {exc}")
            return 2

        import torch
        import torch.distributed as dist

        from .device import detect
        from .figures import match_device
        from .stamp import collect_stamp, gpu_identity

        try:
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
                for s in (sizes_text or (gpu_sizes if device.is_gpu else "64K,1M,4M")).split(",")
            ]
            identity = gpu_identity(device)
            match = match_device(
                device, identity["capability"], identity["memory_gib"], args.catalog_id
            )
        except ValueError as exc:
            _say(f"error: {exc}")
            return 2
        iters = args.iters or (20 if device.is_gpu else 5)
        settings = {"probe": "collectives", "backend": backend, "warmup": args.warmup,
                    "iters": iters}
        stamp = None
        refusal = None
        if topo.rank == 0:
            from . import nvml

            nvml_module, nvml_reason = nvml.open_nvml() if device.kind == "cuda" else (None, None)
            stamp = collect_stamp(device, identity, match, nvml_module, nvml_reason, settings)
            if existing is not None:
                diffs = stamp_differences(existing["stamp"], stamp)
                if diffs and not args.force:
                    refusal = (
                        f"error: {args.out} was measured on another stack; not merging "
                        f"(--force merges anyway): {'; '.join(diffs)}"
                    )
                elif diffs:
                    existing["notes"].append(
                        "collectives merged with --force from a different stack: "
                        + "; ".join(diffs)
                    )
        dist.init_process_group(backend, timeout=timedelta(seconds=args.timeout))
        try:
            # Rank 0's verdict on the merge reaches every rank before anything is measured.
            go = torch.tensor([0 if refusal else 1], device=device.torch_device)
            dist.broadcast(go, src=0)
            if not int(go.item()):
                if refusal:
                    _say(refusal)
                return 2
            interrupts.enter(MEASURING)
            stop_seen = [False]

            def should_stop() -> bool:
                stop_seen[0] = stop_seen[0] or interrupts.measuring_count > 0
                return stop_seen[0]

            try:
                entries = all_reduce_sweep(
                    device, topo, backend, sizes, args.warmup, iters, match.gpu, should_stop
                )
            except KeyboardInterrupt:
                entries = []
                stop_seen[0] = True
            interrupts.enter(FINISHING)
        finally:
            with contextlib.suppress(Exception):
                dist.destroy_process_group()
        if topo.rank != 0:
            return EXIT_INTERRUPTED if interrupts.requested else 0
        if existing is not None:
            record = existing
        else:
            assert stamp is not None
            record = new_record(stamp, settings)
            record["complete"] = not stop_seen[0]
            record["interrupted"] = stop_seen[0]
        record["collectives"] = entries
        if stop_seen[0]:
            record["notes"].append(
                f"collectives interrupted after {len(entries)} of {len(sizes)} sizes"
            )
        status = 0
        if target is not None:
            saved = save_record_text(target, to_json(record))
            if saved.error is None:
                _say(f"record written to {args.out}")
            else:
                where = f"; the record is saved in {saved.path}" if saved.path else ""
                _say(f"error: {saved.error}{where}")
                status = 2
        if args.json:
            print(json.dumps(record, indent=2))
        for e in entries:
            shown = (
                f"busbw {e['busbw_gbps']} GB/s (algbw {e['algbw_gbps']}, rank skew "
                f"{e['rank_skew_pct']}%)"
                if e["status"] == "ok"
                else e["reason"]
            )
            print(f"all_reduce {e['bytes']} B x{e['world_size']} ({e['nodes']} node(s)): {shown}")
        if interrupts.requested:
            return EXIT_INTERRUPTED
        return status
