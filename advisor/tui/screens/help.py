"""F1 or ?: the keys, and a short glossary of the words the wizard uses."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP = """\
[b]Keys[/b]
  ^n / esc   next step / back          F1 or ?   this help (esc closes it)
  enter      select the highlighted row (typing in a table only searches)
  tab        next field (the one with the bright background has the keys)
  ^r / ^x    run / cancel the probes   ^t        next view (Performance, Configurations)
  ^e         export the report (TOML)  ^y        copy the summary (Markdown)
  ^k         rank every catalog GPU    ^s        save a screenshot (SVG)
  ^p         command palette: save the answers, go to any step already reached
  ^q         quit; with answers not saved it asks once (^q again quits)
  A step already reached is a link in the header: click it to go there.

[b]Names[/b] (here, in an answers file, on the command line)
  input tokens (ISL)    workload.seq_lens            --isl (serving), --seq-len
  output tokens (OSL)   workload.osl                 --osl
  TPOT / TTFT limit     workload.tpot_ms / ttft_ms   --tpot-ms / --ttft-ms
  requests in flight    workload.micro_batch         --micro-batch
  MLP                   model gated_mlp (true/false) --mlp gated / plain
  expert FFN width      model moe_ffn                --moe-ffn
  a model's config.json model = { config = "..." }   --model PATH/config.json
  a target's GPUs       targets = ["id@N"]           --target id@N, --target-gpus
  a GPU's own format    layouts.<id>.precision       --current/--target-precision
  its KV-cache format   layouts.<id>.kv_dtype        --current/--target-kv-dtype
  a target's layout     layouts.<id>.tp, .ep, ...    --target-layout id=tp=2,ep=4
  a target's stack      stacks.<id>                  --target-stack id=torch==...
  what you measured     \\[measured]                   --measured-tokens-per-s ...
  LoRA base format      workload.base_format         --base-format (nf4: QLoRA)
  LoRA rank             workload.lora_rank           --lora-rank
  LoRA layers adapted   workload.lora_targets        --lora-targets (all-linear)

[b]Glossary[/b]
  [b]MAMF[/b]  maximum achievable matmul FLOPS: the fastest a GPU really runs large
        matrix multiplies (measured), well below its spec-sheet peak.
  [b]binding resource[/b]  what limits a piece of the step: compute, memory bandwidth,
        network, the host, or memory capacity (it does not fit).
  [b]re-tuned[/b]  the layout (batching, sharding, recompute, TP/PP/CP/EP) the engine
        picks as the fastest that fits each GPU; the verdict compares re-tuned
        against re-tuned, with your layout as run shown beside it.
  [b]break-even[/b]  the target price per GPU-hour (or efficiency) at which both GPUs cost
        the same per token.
  [b]band[/b]  the range the speedup and $/token fall in with 90% confidence, from each
        rate's spread and the model's own error.
  [b]default[/b]  a value you did not give: the engine's own, shown with where it comes
        from; the verdict lists every default it used.
  [b]blocked[/b]  a target that fails a gate (number format or software); it stays in the
        decision with the remedy.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar = [Binding("escape,f1,question_mark,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help", classes="dialog"):
            yield Static(HELP, id="help-text", markup=True)

    def action_close(self) -> None:
        self.dismiss(None)
