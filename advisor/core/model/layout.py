"""A layout as reports and answers carry it: the knobs a user sets, per GPU.

`LayoutOverride` is what an answers file may say about one GPU ("on the B200s we
run 64 GPUs with TP 1", "the B200 serves NVFP4 weights"); anything it leaves out is the
workload's own value. Number formats are per GPU because the first question a Blackwell
buyer asks is "FP8 on my H200 against NVFP4 on a B200".
`LayoutChoice` is a complete layout the engine projected: as the user runs it,
or the one it re-tuned to.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from advisor.core.model import bounds as B
from advisor.core.model.numeric import Whole
from advisor.core.model.strict import StrictInput
from advisor.core.model.vocabulary import BaseFormat, KvDtype, Precision, Recompute


class LayoutOverride(StrictInput):
    model_config = ConfigDict(extra="forbid", frozen=True)

    gpus: Whole | None = Field(default=None, ge=1, le=B.MAX_GPUS,
                               description="GPU count on this side")
    nodes: Whole | None = Field(default=None, ge=1, le=B.MAX_NODES)
    tp: Whole | None = Field(default=None, ge=1, le=B.MAX_GPUS)
    pp: Whole | None = Field(default=None, ge=1, le=B.MAX_GPUS)
    cp: Whole | None = Field(default=None, ge=1, le=B.MAX_GPUS)
    ep: Whole | None = Field(default=None, ge=1, le=B.MAX_GPUS)
    vp: Whole | None = Field(default=None, ge=1, le=B.MAX_LAYERS)
    micro_batch: Whole | None = Field(default=None, ge=1, le=B.MAX_MICRO_BATCH)
    zero_stage: int | None = Field(default=None, ge=0, le=3)
    recompute: Recompute | None = None
    offload_optimizer: bool | None = None
    fused_kernels: bool | None = None
    precision: Precision | None = Field(
        default=None, description="this GPU's number format (weights and GEMMs)")
    kv_dtype: KvDtype | None = Field(default=None, description="this GPU's KV-cache format")

    def fields_given(self) -> dict[str, object]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class LayoutChoice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    gpus: int
    nodes: int
    tp: int
    pp: int
    cp: int
    ep: int
    vp: int
    micro_batch: int = Field(description="sequences per micro-step; serving: requests in flight")
    accumulation: int
    zero_stage: int
    recompute: Recompute
    offload_optimizer: bool
    fused_kernels: bool
    base_format: BaseFormat = Field(default="bf16",
                                    description="lora: the frozen base's format on this GPU")
    offload_frozen_weights: bool = Field(
        default=False, description="lora: the frozen base on the host, streamed each pass")

    def describe(self, serving: bool = False) -> str:
        """A short human line: 'TP 4, PP 2, mbs 2 x 4 acc, ZeRO-1, full recompute'."""
        parts = [f"{self.gpus} GPU" + ("s" if self.gpus != 1 else "")]
        parts += [f"{k.upper()} {v}" for k, v in (("tp", self.tp), ("pp", self.pp),
                                                   ("cp", self.cp), ("ep", self.ep))
                  if v > 1]
        if self.vp > 1:
            parts.append(f"VP {self.vp}")
        if serving:
            parts.append(f"{self.micro_batch} request{'s' if self.micro_batch != 1 else ''} "
                         "in flight per replica")
            return ", ".join(parts)
        parts.append(f"micro-batch {self.micro_batch}"
                     + (f" x {self.accumulation} accumulation" if self.accumulation > 1 else ""))
        parts.append(f"ZeRO-{self.zero_stage}")
        if self.recompute != "none":
            parts.append(f"{self.recompute} recompute")
        if self.offload_optimizer:
            parts.append("optimizer offloaded")
        if self.fused_kernels:
            parts.append("fused loss")
        if self.base_format != "bf16":
            parts.append(f"{BASE_WORDS[self.base_format]} base")
        if self.offload_frozen_weights:
            parts.append("frozen weights offloaded")
        return ", ".join(parts)


BASE_WORDS: dict[str, str] = {"bf16": "16-bit", "fp8": "FP8", "int8": "8-bit (LLM.int8)",
                              "nf4": "4-bit NF4 (QLoRA)", "int4": "4-bit int4 (GPTQ/AWQ)"}
"""A frozen base's format as a layout names it."""
