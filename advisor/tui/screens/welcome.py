"""Step 1: what this box has, and which catalog GPU the workload runs on today."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.widgets import Static

from advisor.tui.hardware import Hardware
from advisor.tui.screens.base import StepScreen

if TYPE_CHECKING:
    from advisor.tui.widgets.catalog_table import CatalogTable


def describe_box(hw: Hardware) -> str:
    """The detected-hardware panel as markup: GPUs, driver, torch/CUDA and kernels."""
    if hw.pending:
        return "[b]GPU[/b]  [dim]looking at this box (nvidia-smi, amd-smi, package metadata)…[/]"
    if hw.has_gpu:
        lines = [
            f"[b]GPU[/b]  {g.count}x {g.name}"
            + (f"  [dim]({g.memory_gib:.0f} GiB)[/]" if g.memory_gib else "")
            + (f"  → catalog [b]{g.catalog_id}[/b]" if g.catalog_id
               else "  [$warning]not in the catalog: pick the closest below[/]")
            for g in hw.gpus
        ]
        lines.append(f"[b]Driver[/b]  {hw.driver or 'unknown'}")
    else:
        lines = [
            "[b]GPU[/b]  [$warning]none detected on this box[/]. That is fine: choose the GPU "
            "you run on today below. Probes can run on this CPU, be skipped for catalog "
            "figures, or come from a record made on your GPU box."
        ]
    pkgs = "  ".join(f"{name} [b]{version}[/b]" if version else f"{name} [dim]not installed[/]"
                     for name, version in hw.packages)
    lines.append(f"[b]Stack[/b]  {pkgs or '[dim]nothing detected[/]'}")
    lines += [f"[dim]{n}[/]" for n in hw.notes]
    return "\n".join(lines)


class WelcomeScreen(StepScreen):
    STEP = 0
    CSS_PATH = None  # the app's stylesheet has its rules: nothing more to parse before it
    _box = ""

    def compose_body(self) -> ComposeResult:
        yield Static("", id="box", markup=True)
        yield Static("Which GPU does the workload run on today? Highlight a row and press "
                     "[b]enter[/b] (or type to search).", classes="prompt")
        if self.ctx.loaded is None:  # the first paint comes before the catalog
            yield Static("[dim]loading the catalog…[/]", id="catalog-loading", markup=True)
        else:
            yield self._table()

    def _table(self) -> CatalogTable:
        # Imported with the catalog, after the first paint: the table (DataTable, Input,
        # Select) is not on screen before it.
        from advisor.tui.widgets.catalog_table import CatalogTable

        return CatalogTable(self.ctx.catalog, mark=self._mark, mark_title="●",
                            on_select=self._choose, id="current")

    def mounted(self) -> None:
        if self.ctx.loaded is not None:
            self.query_one("#gpus").focus()
            self.show_hardware()
        else:
            self._show_box()

    async def catalog_loaded(self) -> None:
        """The table replaces its placeholder, and takes the focus (and the keys typed)."""
        await self.query_one("#catalog-loading").remove()
        await self.query_one("#body").mount(self._table())
        self.query_one("#gpus").focus()
        self.show_hardware()

    def refresh_view(self) -> None:
        self.show_hardware()
        super().refresh_view()

    def hardware_changed(self) -> None:
        self.show_hardware()

    def _show_box(self) -> None:
        box = describe_box(self.ctx.hardware)
        if box != self._box:  # an unchanged panel is not laid out again on a revisit
            self._box = box
            self.query_one("#box", Static).update(box)

    def show_hardware(self) -> None:
        """Fill in the box panel; called again when detection finishes after first paint."""
        hw = self.ctx.hardware
        self._show_box()
        if self.ctx.loaded is None:
            return
        if self.state.current is None:
            detected = [g.catalog_id for g in hw.gpus if g.catalog_id]
            self.state.set_current(detected[0] if detected else None)
        table = self._shown_table()
        table.refresh_marks()
        if self.state.current:
            table.focus_gpu(self.state.current)
        self.refresh_nav()

    def _shown_table(self) -> CatalogTable:
        from advisor.tui.widgets.catalog_table import CatalogTable

        return self.query_one(CatalogTable)

    def _mark(self, gpu_id: str) -> str:
        return "●" if gpu_id == self.state.current else ""

    def _choose(self, gpu_id: str) -> None:
        self.state.set_current(gpu_id)
        self._shown_table().refresh_marks()
        self.refresh_nav()

    def ready(self) -> tuple[bool, str]:
        if self.ctx.loaded is None:
            return False, "loading the catalog…"
        if self.state.current is None:
            return False, "choose the current GPU first"
        return True, f"current GPU: {self.ctx.catalog.gpu(self.state.current).name}"
