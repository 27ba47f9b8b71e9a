"""Imported probe records, one per catalog GPU, and the stack-drift check between them.

A record measured on a rented box is copied here (`advisor probe import FILE`) so later
decisions can use it offline. Records compared in one decision should come from the same
software: in one published comparison, stack drift alone (torch, CUDA, kernels) moved
the result by +16-23%, more than many GPU upgrades are worth. So every import compares
the new record's stack with the records already stored, and says so loudly when they differ.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from advisor.core.errors import InputError
from advisor.core.model.bounds import MAX_JSON_BYTES
from advisor.core.model.catalog import Catalog
from advisor.core.model.drift import Drift, drift_warning, stack_drift
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.text import clean, clean_block
from advisor.io.atomic import write_output
from advisor.io.documents import (
    display_name,
    load_probe_record,
    probe_record_from_bytes,
    read_document,
)
from advisor.io.paths import probes_dir

# A workload probe's record (`advisor probe --workload`, `python -m probes workload`) is
# kept beside the suite's record of the same GPU, not over it: one holds the kernel rates,
# the other the user's own step.
WORKLOAD_SUFFIX = ".workload.json"


def stored_path(gpu_id: str, workload: bool = False) -> Path:
    return probes_dir() / f"{gpu_id}{WORKLOAD_SUFFIX if workload else '.json'}"


def warn_skipped(line: str) -> None:
    print(f"advisor: warning: {clean(line)}", file=sys.stderr)


def stored_probes(on_skip: Callable[[str], None] | None = warn_skipped) -> dict[str, ProbeRecord]:
    """Every imported suite record, by catalog id.

    An entry that no longer loads (edited by hand, written by another version, damaged) is
    skipped with one line naming it, through `on_skip`: one bad file must not stop every
    decision, and the others are still used.
    """
    return _stored(False, on_skip)


def stored_workloads(
    on_skip: Callable[[str], None] | None = warn_skipped,
) -> dict[str, ProbeRecord]:
    """Every imported workload-probe record, by catalog id (`measured_workload()` on each)."""
    return _stored(True, on_skip)


def _stored(workload: bool, on_skip: Callable[[str], None] | None) -> dict[str, ProbeRecord]:
    folder = probes_dir()
    if not folder.is_dir():
        return {}
    out = {}
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(WORKLOAD_SUFFIX) != workload:
            continue
        try:
            out[path.name.removesuffix(WORKLOAD_SUFFIX if workload else ".json")] = (
                load_probe_record(path))
        except InputError as exc:
            if on_skip is not None:
                on_skip(f"{exc.one_line()}; skipped this stored probe record "
                        "(re-import it or delete the file)")
    return out


def probes_for(gpu_ids: Iterable[str], catalog: Catalog, files: Sequence[str] = (),
               stored: bool = True) -> dict[str, ProbeRecord]:
    """The suite records a decision uses: the imported ones for its GPUs, then explicit
    files (a workload-probe file goes to `workloads_for` instead)."""
    return _records_for(gpu_ids, catalog, files, stored, workload=False)


def workloads_for(gpu_ids: Iterable[str], catalog: Catalog, files: Sequence[str] = (),
                  stored: bool = True) -> dict[str, ProbeRecord]:
    """The workload-probe records a decision may anchor on, by GPU: imported, then files."""
    return _records_for(gpu_ids, catalog, files, stored, workload=True)


def _records_for(gpu_ids: Iterable[str], catalog: Catalog, files: Sequence[str], stored: bool,
                 workload: bool) -> dict[str, ProbeRecord]:
    wanted = set(gpu_ids)
    mine = stored_workloads() if workload else stored_probes()
    out = {g: r for g, r in mine.items() if g in wanted} if stored else {}
    for file in files:
        record = load_probe_record(file)
        cid = record.stamp.device.catalog_id
        try:
            gpu_id = catalog.gpu(cid).id if cid else None
        except InputError as exc:
            raise InputError(exc.message, file=file, field="stamp.device.catalog_id",
                             value=cid) from None
        if gpu_id is None:
            raise InputError("record names no catalog GPU; file it with "
                             "`advisor probe import FILE --gpu ID`", file=file,
                             field="stamp.device.catalog_id", value=None, has_value=True)
        if gpu_id not in wanted:
            raise InputError(f"record is for {gpu_id}, which this decision does not compare",
                             file=file, field="stamp.device.catalog_id", value=cid)
        if (record.workload is not None) == workload:
            out[gpu_id] = record
    return out


@dataclass(frozen=True)
class Imported:
    gpu_id: str
    path: Path
    record: ProbeRecord
    replaced: ProbeRecord | None
    drift: list[Drift] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        s = self.record.stamp
        torch = s.versions.torch or "no torch"
        kind = "workload probe record" if self.record.workload is not None else "probe record"
        head = (f"imported {kind} for {self.gpu_id}: {s.device.name} on {s.hostname}, "
                f"{s.date}, torch {torch}; stored in {self.path}")
        if self.replaced is not None:
            head += f" (replaced the record from {self.replaced.stamp.date})"
        return "\n".join([head, *(f"note: {n}" for n in self.notes)])


def import_probe(file: str | Path, catalog: Catalog, gpu: str | None = None) -> Imported:
    """Validate a record from another box, file it under its catalog id, check stack drift."""
    data = read_document(file, MAX_JSON_BYTES)  # `-`: standard input
    file = display_name(file)
    record = probe_record_from_bytes(data, file)  # the store's own reader, on these bytes
    device = record.stamp.device
    notes = []
    if device.kind == "cpu":
        raise InputError("record was measured on the CPU, not an accelerator; nothing to import",
                         file=str(file), field="stamp.device.kind", value=device.kind)
    if gpu is not None:
        gpu_id = catalog.gpu(gpu).id
        if device.catalog_id and device.catalog_id != gpu_id:
            notes.append(f"filed as {gpu_id}, though the record says {device.catalog_id}")
    elif device.catalog_id:
        try:
            gpu_id = catalog.gpu(device.catalog_id).id
        except InputError as exc:
            raise InputError(f"{exc.message}; pass --gpu ID", file=str(file),
                             field="stamp.device.catalog_id", value=device.catalog_id) from None
    else:
        why = f" ({device.catalog_note})" if device.catalog_note else ""
        raise InputError(f"record names no catalog GPU for {device.name!r}{why}; pass --gpu ID",
                         file=str(file), field="stamp.device.catalog_id", value=None,
                         has_value=True)
    if not record.complete or record.interrupted:
        notes.append("the record is incomplete (the probe run was interrupted); "
                     "missing figures fall back to the catalog")

    workload = record.workload is not None
    others = stored_probes(on_skip=None)  # a damaged entry is not compared with
    workloads = stored_workloads(on_skip=None)
    replaced = (workloads if workload else others).pop(gpu_id, None)
    compared = {f"new {gpu_id}": record}
    if replaced is not None:
        compared[f"previous {gpu_id}"] = replaced
    compared.update(others)
    compared.update({f"{g} workload": r for g, r in workloads.items()})
    drift = stack_drift(_comparable(compared))

    path = stored_path(gpu_id, workload)
    write_output(path, data, create_parents=True)  # the validated bytes, extra fields and all
    return Imported(gpu_id, path, record, replaced, drift, notes)


def _comparable(records: dict[str, ProbeRecord]) -> dict[str, ProbeRecord]:
    """Suite and workload records measure different things with different run settings:
    where both are compared, their stacks are, their run settings are not."""
    kinds = {r.workload is not None for r in records.values()}
    if len(kinds) < 2:
        return records
    return {label: r.model_copy(update={"settings": {},
                                        "stamp": r.stamp.model_copy(update={"run": {}})})
            for label, r in records.items()}


def import_command(file: str, gpu: str | None) -> int:
    """`advisor probe import`: file the record, say where, and warn loudly on stack drift."""
    from advisor.io.catalog_store import effective_catalog

    done = import_probe(file, effective_catalog(), gpu)
    print(clean_block(done.summary()))
    if done.drift:
        print(clean_block(drift_warning(done.drift)), file=sys.stderr)
    return 0
