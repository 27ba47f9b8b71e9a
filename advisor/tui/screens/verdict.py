"""Step 9: for each target, the decision, why, what it costs side by side, and what flips it.

From here the user exports the report (ctrl+e) or saves an SVG (ctrl+s).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Static

from advisor.core.text import clean_block
from advisor.textfmt import fmt_num, render_table
from advisor.tui.screens.base import DecisionScreen

if TYPE_CHECKING:
    from advisor.core.decide import Decision, GpuResult

KIND = {
    "upgrade": ("UPGRADE", "$success"),
    "upgrade-for-time": ("UPGRADE FOR TIME", "$accent"),
    "break-even": ("BREAK-EVEN", "$primary"),
    "hold": ("HOLD", "$warning"),
    "blocked-by-gate": ("BLOCKED", "$error"),
    "capability": ("CAPABILITY UPGRADE", "$success"),
}
WARNING_KINDS = ("software", "evidence", "power")


def _hours(h: float | None) -> str:
    if h is None:
        return "-"
    return f"{h:,.0f} h ({h / 24:,.1f} d)" if h >= 48 else f"{h:,.1f} h"


def short(text: str, limit: int = 110) -> str:
    """Long catalog notes end at their first parenthesis; the report keeps the full text."""
    if len(text) <= limit:
        return text
    cut = text.find(" (")
    return (text[:cut] if 0 < cut <= limit else text[:limit].rsplit(" ", 1)[0]) + " …"


def side_by_side(cur: GpuResult, tgt: GpuResult, seq: int) -> str:
    """$/token, wall-clock and energy for the token budget, current beside target."""
    def col(r: GpuResult) -> list[str]:
        p = r.point(seq)
        j = r.job
        q = r.assumptions.price if r.assumptions else None
        return [
            f"${q.usd_per_hour:.2f} {'quote' if q.source == 'user' else 'default'}" if q else "-",
            fmt_num(p.tokens_per_s_per_gpu, 0),
            f"${fmt_num(p.usd_per_mtok, 3)}" if p.usd_per_mtok is not None else "-",
            _hours(j.wall_clock_h if j else None),
            f"${fmt_num(j.usd, 0)}" if j and j.usd is not None else "-",
            fmt_num(j.energy_kwh, 0) if j else "-",
            fmt_num(j.power_kw, 1) if j else "-",
        ]
    labels = ["$/GPU-hour", "tokens/s per GPU", "$ per Mtok", "wall-clock", "job $",
              "energy kWh", "power kW"]
    rows = [[label, a, b] for label, a, b in zip(labels, col(cur), col(tgt), strict=True)]
    return render_table([f"at {seq:,} tokens", f"{cur.gpu} (now)", tgt.gpu], rows)


def headline(label: str, text: str) -> str:
    """The core's headline without the "break-even: " its badge already says."""
    kind, sep, rest = text.partition(": ")
    return rest if sep and kind.lower() == label.lower() else text


def _states(head: str, warning: str) -> bool:
    """Whether the headline already gives a warning's figures ("the band straddles a tie:
    $/token 0.85-1.11x" beside a break-even headline that quotes that band)."""
    figures = warning.partition(": ")[2]
    return bool(figures) and figures in head


def card(decision: Decision, t: GpuResult, packing: bool) -> str:
    """One target's verdict as markup; core text is escaped, and nothing is said twice: no
    kind before the headline, no warning the headline states, no break-even price line
    beside a flip at that price."""
    v = t.verdict
    assert v is not None
    label, colour = KIND[v.kind]
    head = headline(label, v.headline)
    out = [f"[b reverse {colour}] {label} [/] [b]{t.gpu}[/b]  {escape(head)}"]
    reasons = [r for r in v.reasons if r.kind not in WARNING_KINDS]
    out += [f"  • {escape(r.text)}" for r in reasons[:5]]
    out.append("")
    out.append(escape(side_by_side(decision.current, t, decision.primary_seq_len)))
    out.append("")
    price_flip = any(f.assumption == f"{t.gpu} price" for f in v.flips)
    if t.break_even_usd_per_hour is not None and not price_flip:
        out.append(f"[b]break-even price[/b] ${t.break_even_usd_per_hour:.2f}/GPU-hour for "
                   f"{t.gpu}: below it the target is cheaper per token")
    if v.flips:
        out.append("[b]sensitivity[/b]")
        out += [f"  ↻ {escape(f.text)}" for f in v.flips]
    warnings = [short(r.text) for r in v.reasons
                if r.kind in WARNING_KINDS and not _states(head, r.text)]
    if packing:
        warnings.append("packed data: attention cost assumes a document mask "
                        "(Σ len² per sequence); without one it grows with the full length")
    if warnings:
        out.append("[b $warning]warnings[/]")
        out += [f"  ! {escape(w)}" for w in warnings]
    return clean_block("\n".join(out))  # a resumed report's text is someone else's


class VerdictScreen(DecisionScreen):
    STEP = 8
    BINDINGS: ClassVar = [
        Binding("ctrl+e", "app.export", "Export report", key_display="^e"),
        Binding("ctrl+s", "app.save_svg", "Screenshot", key_display="^s"),
    ]

    def compose_result(self) -> ComposeResult:
        yield Static("", id="verdict-summary", markup=True)
        yield VerticalScroll(id="verdicts")

    def render_result(self, decision: Decision) -> None:
        summary = "  ".join(
            f"[b]{t.gpu}[/b] [{KIND[t.verdict.kind][1]}]{KIND[t.verdict.kind][0]}[/]"
            for t in decision.targets if t.verdict) + f"   [dim]vs {decision.current.gpu} " \
            "today; details below (scroll)[/]"
        sweep = self.state.decision_sweep()
        if sweep is not None:
            summary += f"\n[dim]configurations (step 8): {escape(sweep.choice.reason)}[/]"
        self.query_one("#verdict-summary", Static).update(summary)
        box = self.query_one("#verdicts", VerticalScroll)
        box.remove_children()
        packing = decision.answers.workload.packed_doc_len is not None
        cards = [Static(card(decision, t, packing), classes="verdict-card", markup=True)
                 for t in decision.targets]
        extra = [f"  – {g}: {escape(why)}" for g, why in self.state.excluded.items()]
        if extra:
            cards.append(Static("[b]left out at the gates[/b]\n" + "\n".join(extra),
                                classes="verdict-card", markup=True))
        cards.append(Static("[dim]" + "\n".join(escape(n) for n in decision.notes) + "[/]",
                            classes="notes", markup=True))
        box.mount_all(cards)
        box.focus()  # arrows and page keys scroll the cards

    def ready(self) -> tuple[bool, str]:
        ok, hint = super().ready()
        return ok, hint or "^e exports the report; ^s saves an SVG"
