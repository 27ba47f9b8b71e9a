"""What the user measured their job doing today, on the current GPU: the anchor of a decision.

A user almost always knows one number better than any model: the throughput of their own
job. Any one of tokens/s per GPU, step time (with the global batch) or MFU gives it for
training; output tokens/s per GPU at a stated concurrency, or TPOT, for serving. The
attention share of the step and the peak memory are optional and let the fit say which
part of the step is off. The figures are for the workload's primary sequence length, in
the layout the answers describe (as run).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from advisor.core.model import bounds as B
from advisor.core.model.printable import PrintableModel

Source = Literal["user", "probe"]


class MeasuredRun(PrintableModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    tokens_per_s_per_gpu: float | None = Field(
        default=None, ge=B.MIN_RATE_PER_S, le=B.MAX_TOKENS_PER_S,
        description="training: tokens/s per GPU; serving: output tokens/s per GPU")
    step_s: float | None = Field(default=None, ge=B.MIN_STEP_S, le=B.MAX_SECONDS,
                                 description="training: seconds per optimizer step")
    mfu: float | None = Field(default=None, ge=B.MIN_MFU, le=1,
                              description="training: model FLOPs utilisation")
    attention_share: float | None = Field(
        default=None, ge=0, le=1, description="share of the step's GPU time in attention")
    peak_memory_gib: float | None = Field(default=None, gt=0, le=B.MAX_DEVICE_GIB)
    concurrency: int | None = Field(default=None, ge=1, le=B.MAX_MICRO_BATCH,
                                    description="serving: requests in flight per replica")
    ttft_ms: float | None = Field(default=None, ge=B.MIN_MS, le=B.MAX_SECONDS * 1000)
    tpot_ms: float | None = Field(default=None, ge=B.MIN_MS, le=B.MAX_SECONDS * 1000)
    source: Source = Field(default="user", description="user, or a workload probe record")
    note: str = Field(default="", max_length=B.MAX_NAME_CHARS,
                      description="where the figure comes from (a run id, a dashboard)")

    @model_validator(mode="after")
    def _one_throughput(self) -> MeasuredRun:
        given = [x for x in (self.tokens_per_s_per_gpu, self.step_s, self.mfu, self.tpot_ms)
                 if x is not None]
        if not given:
            raise ValueError("give what you measured: tokens_per_s_per_gpu, step_s, mfu or "
                             "(serving) tpot_ms")
        return self

    @property
    def what(self) -> str:
        """The headline figure, as the outputs say it."""
        if self.tokens_per_s_per_gpu is not None:
            return f"{self.tokens_per_s_per_gpu:,.0f} tokens/s per GPU"
        if self.step_s is not None:
            return f"{self.step_s:g} s per step"
        if self.mfu is not None:
            return f"{self.mfu:.0%} MFU"
        return f"{self.tpot_ms:g} ms per output token"
