"""The catalog's default prices, from the dated quotes in the shared price reference.

`../shared/reference/gpu-prices-2026.md` lists every public quote found, with its provider,
type, date and source, and marks with `med` the one latest dated on-demand quote per
provider that its per-GPU median uses. A GPU's default price is that median, dated by its
newest quote and cited with every quote it is the median of. This script reads the
reference, checks each median against the reference's own median table, and prints the
[[price]] rows for catalog/prices.toml:

    python scripts/price_defaults.py > /tmp/defaults.toml

The test suite reads the same reference through `medians()` and checks prices.toml against
it, so a default cannot drift from its quotes.
"""

from __future__ import annotations

import re
import statistics
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / \
    "gpu-prices-2026.md"
CITED = "../shared/reference/gpu-prices-2026.md"

# The reference's GPU names -> catalog ids (only the GPUs the catalog has).
CATALOG_ID = {
    "A100 80GB SXM": "a100-sxm", "A100 80GB PCIe": "a100-pcie", "H100 SXM": "h100-sxm",
    "H100 PCIe": "h100-pcie", "H100 NVL": "h100-nvl", "H200 SXM": "h200-sxm",
    "H200 NVL": "h200-nvl", "GH200": "gh200-96g", "B200": "b200-sxm", "B300": "b300-sxm",
    "GB200 NVL72": "gb200", "GB300 NVL72": "gb300", "L4": "l4", "L40S": "l40s",
    "RTX 4090": "rtx-4090", "RTX 5090": "rtx-5090", "RTX 6000 Ada": "rtx-6000-ada",
    "RTX PRO 6000 Blackwell Server": "rtx-pro-6000-bw-server",
    "RTX PRO 6000 Blackwell Workstation": "rtx-pro-6000-bw-workstation", "A10G": "a10g",
    "A10 (PCIe, not A10G)": "a10", "T4": "t4", "V100": "v100-sxm", "MI300X": "mi300x",
    "MI325X": "mi325x", "MI355X": "mi355x", "TPU v6e (Trillium)": "tpu-v6e",
    "TPU v5e": "tpu-v5e", "TPU v5p": "tpu-v5p",
}
# What a default for a catalog GPU rests on when the quotes name a near variant.
CAVEAT = {
    "gh200-96g": "Lambda quotes the 96 GB part; CoreWeave does not state its memory",
    "v100-sxm": "the quotes are for 16 GB V100s (SXM2 and unstated forms); none was found "
                "for the 32 GB card",
    "gb200": "CoreWeave rents only whole NVL72 racks; Spheron's per-Superchip price is "
             "halved for its two GPUs",
    "gb300": "whether the quoted GPU sits in an NVL72 rack is not stated",
    "tpu-v6e": "Google's 'starting at' per-chip rate at general availability",
}
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
_MONTH = re.compile(r"(January|February|March|April|May|June|July|August|September|October|"
                    r"November|December) (\d{4})")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")


def _dated(cell: str) -> tuple[date, str]:
    """(the date a quote sorts by, as it is said): its first ISO date, else its month (the
    first of the month, said as the month)."""
    found = _ISO.search(cell)
    if found:
        return date.fromisoformat(found[0]), found[0]
    month = _MONTH.search(cell)
    if month is None:
        raise ValueError(f"a quote with no date: {cell!r}")
    return date(int(month[2]), MONTHS.index(month[1]) + 1, 1), month[0]


@dataclass(frozen=True)
class Quote:
    provider: str
    usd_per_gpu_hour: float
    when: str  # the reference's date cell, as written
    dated: date  # what it sorts by
    said: str  # the date as a label says it: '2026-10-05', or 'March 2026'
    source: str


@dataclass(frozen=True)
class Median:
    gpu: str  # catalog id
    name: str  # the reference's GPU name
    usd_per_gpu_hour: float
    quotes: tuple[Quote, ...]
    published: float  # the reference's own median, to check against

    @property
    def newest(self) -> Quote:
        return max(self.quotes, key=lambda q: q.dated)

    @property
    def oldest(self) -> Quote:
        return min(self.quotes, key=lambda q: q.dated)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _section(text: str, title: str) -> list[list[str]]:
    body = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    rows = [_cells(x) for x in body.splitlines() if x.startswith("| ")]
    return rows[1:]  # the header row; the |---| row does not start with "| "


def medians(path: Path = REFERENCE) -> list[Median]:
    """Each catalog GPU's median of its `med` quotes, with the reference's own figure."""
    text = path.read_text(encoding="utf-8")
    quotes: dict[str, list[Quote]] = {}
    for c in _section(text, "1. Quotes"):
        if len(c) < 11 or c[9] != "✓":
            continue
        dated, said = _dated(c[7])
        quotes.setdefault(c[0], []).append(Quote(
            provider=c[1], usd_per_gpu_hour=float(c[5]), when=c[7], dated=dated, said=said,
            source=c[8]))
    published = {c[0]: float(c[2].strip("*")) for c in _section(text, "2. Median")}
    out = []
    for name, gpu in CATALOG_ID.items():
        mine = quotes[name]
        out.append(Median(gpu=gpu, name=name, quotes=tuple(mine), published=published[name],
                          usd_per_gpu_hour=round(statistics.median(
                              q.usd_per_gpu_hour for q in mine), 4)))
    return out


def _short(provider: str) -> str:
    """'Lambda (4 SKUs; 8x cheapest)' -> 'Lambda'; 'AWS p5.48xlarge' -> 'AWS'."""
    head = re.split(r"[ (]", provider, maxsplit=1)[0]
    return {"Google": "Google Cloud", "DataCrunch/Verda": "DataCrunch"}.get(head, head)


def _toml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def price_row(m: Median) -> str:
    providers = ", ".join(dict.fromkeys(_short(q.provider) for q in m.quotes))
    old, new = m.oldest.said, m.newest.said
    span = old if old == new else f"{old} to {new}"
    n = len(m.quotes)
    what = f"median of {n} on-demand quotes" if n > 1 else "the one on-demand quote found"
    label = f"{what} ({providers}), {span}"
    if m.gpu in CAVEAT:
        label += f"; {CAVEAT[m.gpu]}"
    cites = [f"{CITED}, section 2: the median of one latest dated on-demand quote per "
             f"provider for {m.name}"]
    cites += [f"{q.provider}: ${q.usd_per_gpu_hour:g}/GPU-hour on demand, {q.when}: {q.source}"
              for q in m.quotes]
    return "\n".join([
        "[[price]]", f'gpu = "{m.gpu}"', f"usd_per_hour = {m.usd_per_gpu_hour:g}",
        f"label = {_toml(label)}", "default = true",
        "source = [\n" + "".join(f"  {_toml(c)},\n" for c in cites) + "]",
        f"retrieved = {m.newest.dated.isoformat()}", ""])


def main() -> int:
    rows = medians()
    wrong = [m for m in rows if abs(m.usd_per_gpu_hour - m.published) > 0.001]
    for m in wrong:
        print(f"{m.name}: median {m.usd_per_gpu_hour} of the marked quotes, but the "
              f"reference's table says {m.published}", file=sys.stderr)
    print("\n".join(price_row(m) for m in rows))
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
