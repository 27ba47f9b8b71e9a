"""LoRA's two halves: the adapters it trains and the frozen base it trains them against.

Which linear layers carry an adapter sets the trainable weights, and with them the optimizer
state, the gradients and their traffic (`adapters`). The base may be held in fewer bits than
it was trained in (QLoRA's 4-bit NF4 is the common case); what that is known to cost in
accuracy is a published fact per format (`BASE_ACCURACY`), which a decision reports whenever a
base is held that way, by the user or by a re-tune they allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from advisor.core.model import bounds as B
from advisor.core.model.layout import LayoutChoice
from advisor.core.model.vocabulary import ALL_LINEAR, BaseFormat

if TYPE_CHECKING:
    from advisor.core.model.transformer import ModelSpec

QLORA_FORMAT: BaseFormat = "nf4"
"""What a re-tune that may quantize the base chooses: QLoRA's NF4 (with double quantization
where the answers keep it)."""

AccuracyRisk = Literal["none", "low", "unmeasured"]
QLORA = "https://arxiv.org/abs/2305.14314 (Dettmers et al. 2023, QLoRA)"


@dataclass(frozen=True)
class BaseAccuracy:
    """What holding the frozen base in one format is published to cost in accuracy."""

    risk: AccuracyRisk
    evidence: str


BASE_ACCURACY: dict[str, BaseAccuracy] = {
    "bf16": BaseAccuracy("none", "the checkpoint's own 16-bit weights"),
    "fp8": BaseAccuracy(
        "low", "MLPerf Training's Llama-2-70B LoRA: NVIDIA's NeMo implementation holds the frozen "
               "base in FP8 (fp8_params follows FP8, set in its H200 configuration) and reaches "
               "the benchmark's quality target (github.com/mlcommons/training_results_v4.0, "
               "NVIDIA/benchmarks/llama2_70b_lora/implementations/nemo)"),
    "int8": BaseAccuracy(
        "low", f"{QLORA}, Table 3: an 8-bit integer base matches 16-bit LoRA and full "
               "fine-tuning on GLUE and Super-NaturalInstructions"),
    "nf4": BaseAccuracy(
        "low", f"{QLORA}, Table 4: NF4 with double quantization matches a 16-bit base on "
               "5-shot MMLU over LLaMA 7B-65B (mean 53.1 vs 53.0); adapters trained on it are "
               "tied to the quantized base (merged into the 16-bit one, outputs shift)"),
    "int4": BaseAccuracy(
        "unmeasured", f"{QLORA} compares NF4, FP4 and Int8 bases, not group-wise int4 "
                      "(GPTQ/AWQ); its FP4 base was about a point of MMLU behind NF4"),
}


class BaseOption(BaseModel):
    """One way of holding a LoRA's frozen base at one sequence length, as projected: its
    format and where it lives, what it costs per optimizer step and in accuracy, and the
    layout that runs it."""

    model_config = ConfigDict(frozen=True)

    base_format: BaseFormat
    offload_frozen_weights: bool
    fits: bool
    memory_gib: float
    tokens_per_s_per_gpu: float
    step_s: float = Field(ge=B.MIN_STEP_S, description="per optimizer step: what the parts "
                                                        "below are shares of (a kept report's "
                                                        "is held to it at load)")
    dequant_s: float = Field(ge=0, description="per step: dequantising the base before its "
                                               "GEMMs (HBM traffic and kernels)")
    stream_s: float = Field(ge=0, description="per step: streaming the offloaded base over "
                                              "the host link, beyond what hides behind compute")
    accuracy_risk: AccuracyRisk
    chosen: bool = Field(description="the re-tune runs it (allowed by allow_quantized_base); "
                                     "else it is what would fit")
    layout: LayoutChoice


@dataclass(frozen=True)
class Linear:
    """One linear layer of a transformer layer, averaged over dense and MoE layers."""

    target: str  # the LoRA target it answers to
    d_in: float
    d_out: float
    copies: float  # per layer: experts count each of theirs
    active: float  # per layer, per token: routed experts only the ones a token is sent to
    routed: bool  # a routed expert's (expert parallelism shards it)


def linears(m: ModelSpec, fused_qkv: bool = False) -> list[Linear]:
    """Every linear layer of one transformer layer: attention's projections (MLA's low-rank
    ones answer to q_proj, k_proj/v_proj and o_proj; `fused_qkv`: Q, K and V as one, qkv_proj),
    then the MLP's, dense layers' and experts' averaged over the layers by their share. The
    router and the LM head are left out (PEFT's 'all-linear' skips the head; the router is a
    sliver)."""
    h = float(m.hidden)
    out: list[Linear] = []
    if fused_qkv:
        qkv = m.heads * m.qk_dim + m.kv_heads * (m.qk_dim + m.v_dim)
        return [Linear("qkv_proj", h, qkv, 1, 1, False),
                *(x for x in linears(m) if x.target not in ("q_proj", "k_proj", "v_proj"))]
    if m.mla:
        a = m.mla
        out += [Linear("q_proj", h, a.q_lora_rank, 1, 1, False),
                Linear("q_proj", a.q_lora_rank, m.heads * m.qk_dim, 1, 1, False),
                Linear("k_proj", h, a.kv_lora_rank + a.qk_rope_head_dim, 1, 1, False),
                Linear("v_proj", a.kv_lora_rank, m.heads * (a.qk_nope_head_dim + a.v_head_dim),
                       1, 1, False)]
    else:
        out += [Linear("q_proj", h, m.heads * m.qk_dim, 1, 1, False),
                Linear("k_proj", h, m.kv_heads * m.qk_dim, 1, 1, False),
                Linear("v_proj", h, m.kv_heads * m.v_dim, 1, 1, False)]
    out.append(Linear("o_proj", m.heads * m.v_dim, h, 1, 1, False))
    share = m.moe_layers / m.layers
    mats = ("gate_proj", "up_proj") if m.gated_mlp else ("up_proj",)

    def mlp(width: float, copies: float, active: float, routed: bool) -> None:
        out.extend(Linear(t, h, width, copies, active, routed) for t in mats)
        out.append(Linear("down_proj", width, h, copies, active, routed))

    if share < 1:
        mlp(m.ffn, 1 - share, 1 - share, False)
    if share > 0:
        if m.shared_experts:
            mlp(m.expert_ffn, share * m.shared_experts, share * m.shared_experts, False)
        mlp(m.expert_ffn, share * m.experts, share * m.active_experts, True)
    return out


def targeted(targets: tuple[str, ...]) -> frozenset[str]:
    """The module names a target list adapts ('all-linear': every one)."""
    return frozenset(ALL_LINEAR if "all-linear" in targets else targets)


@dataclass(frozen=True)
class Adapters:
    """A LoRA's adapters over the whole model: rank r on a d_in x d_out layer trains
    r (d_in + d_out) weights (A is d_in x r, B is r x d_out)."""

    trainable: float  # adapter weights held (every expert's)
    trainable_routed: float  # ... of them on routed experts (expert parallelism shards these)
    active: float  # adapter weights one token passes through
    width: float  # per layer: sum of d_in + d_out over the adapted layers a token passes
    modules: float  # per layer: adapted layers a token passes (two skinny GEMMs each per pass)


def adapters(m: ModelSpec, rank: int, targets: tuple[str, ...]) -> Adapters:
    names = targeted(targets)
    chosen = [x for x in linears(m, fused_qkv="qkv_proj" in names) if x.target in names]
    per = [rank * (x.d_in + x.d_out) for x in chosen]
    return Adapters(
        trainable=m.layers * sum(p * x.copies for p, x in zip(per, chosen, strict=True)),
        trainable_routed=m.layers * sum(p * x.copies for p, x in zip(per, chosen, strict=True)
                                        if x.routed),
        active=m.layers * sum(p * x.active for p, x in zip(per, chosen, strict=True)),
        width=sum((x.d_in + x.d_out) * x.active for x in chosen),
        modules=sum(x.active for x in chosen))


def frozen_linears(m: ModelSpec) -> tuple[float, float, float]:
    """(linear layers per transformer layer, of them routed experts', the largest one's
    weights): a dequantised base runs one dequantisation kernel per layer per pass, and holds
    one 16-bit copy at a time."""
    all_ = linears(m)
    return (sum(x.copies for x in all_), sum(x.copies for x in all_ if x.routed),
            max(x.d_in * x.d_out for x in all_))
