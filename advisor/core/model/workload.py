"""How the user runs the model: mode, sequence lengths, batch, precision and parallelism.

These are the inputs every projection starts from. They are plain pydantic
models so a workload round-trips through answers.toml and reports unchanged.
The layout fields (micro-batch, recompute, ZeRO stage, TP/PP/CP/EP, offload)
describe the configuration as the user runs it today; the engine also searches
the layout a user would re-tune to on each GPU (see `projection.retune`).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, ValidationInfo, model_validator

from advisor.core.model import bounds as B
from advisor.core.model.frameworks import SERVING_ENGINES, TRAINING_FRAMEWORKS, Framework
from advisor.core.model.numeric import Amount, Plain, TokenLength, Whole
from advisor.core.model.presets import resolve_preset
from advisor.core.model.strict import StrictInput
from advisor.core.model.transformer import ModelSpec
from advisor.core.model.vocabulary import (
    ALL_LINEAR,
    DEQUANTISED,
    KV_BYTES,
    LOW_PRECISION,
    TRAINING_MODES,
    AttentionKernel,
    BaseFormat,
    KvDtype,
    LoraTarget,
    Mode,
    Optimizer,
    Precision,
    Recompute,
)

LORA_DEFAULTS: dict[str, object] = {
    "base_format": "bf16", "double_quant": True, "lora_rank": 16,
    "lora_targets": ("all-linear",), "offload_frozen_weights": False,
    "allow_quantized_base": False,
}
"""The LoRA fields and their defaults: another mode takes none of them."""


class _Frozen(StrictInput):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Workload(_Frozen):
    """How the model is run: mode, sequence lengths, batch, precision and parallelism."""

    mode: Mode = "pretrain"
    model: ModelSpec
    seq_lens: list[TokenLength] = Field(
        min_length=1, max_length=B.MAX_SEQ_LENS,
        description="the sweep; the first is the primary. For serve, the input lengths (ISL) "
                    "swept at the output length `osl`")
    micro_batch: Whole = Field(default=1, ge=1, le=B.MAX_MICRO_BATCH,
                               description="sequences per GPU per micro-step; for serving, "
                                           "requests in flight")
    global_batch: Whole | None = Field(
        default=None, ge=1, le=B.MAX_GLOBAL_BATCH,
        description="sequences per optimizer step; default one micro-batch per DP rank",
    )
    packed_doc_len: TokenLength | None = Field(
        default=None, ge=1, le=B.MAX_SEQ_LEN,
        description="mean document length when sequences are packed with a doc mask",
    )
    precision: Precision = "bf16"
    optimizer: Optimizer = "adamw"
    zero_stage: int = Field(default=0, ge=0, le=3, description="ZeRO / FSDP sharding stage")
    recompute: Recompute = Field(
        default="none", description="activation recompute: none, selective (cheap elementwise "
                                    "and attention internals) or full (every layer)")
    offload_optimizer: bool = False
    base_format: BaseFormat = Field(
        default="bf16", description="lora: the frozen base as held: bf16 (the checkpoint's 16 "
                                    "bits), fp8, int8 (bitsandbytes LLM.int8), nf4 (bitsandbytes "
                                    "4-bit, QLoRA) or int4 (GPTQ/AWQ, groups of 128)")
    double_quant: bool = Field(
        default=True, description="lora, nf4 base: quantize its absmax constants too (QLoRA's "
                                  "double quantization: 0.127 bits per weight instead of 0.5)")
    lora_rank: Whole = Field(default=16, ge=1, le=B.MAX_WIDTH, description="lora: adapter rank")
    lora_targets: tuple[LoraTarget, ...] = Field(
        default=("all-linear",), min_length=1, max_length=len(ALL_LINEAR) + 1,
        description="lora: the layers that carry adapters (PEFT's module names) or all-linear")
    offload_frozen_weights: bool = Field(
        default=False, description="lora: the frozen base lives on the host and is streamed to "
                                   "the GPU layer by layer each pass (DeepSpeed's offload_param)")
    allow_quantized_base: bool = Field(
        default=False, description="lora: where the base as given does not fit, the re-tune may "
                                   "hold it in 4-bit NF4 (QLoRA) or offload it, and says so")
    fused_kernels: bool = Field(
        default=False, description="fused norm/SwiGLU/RoPE and chunked cross-entropy (e.g. Liger)"
    )
    attention_kernel: AttentionKernel = Field(
        default="auto", description="auto: the kernel the declared stack runs on each GPU")
    framework: Framework = Field(
        default="auto", description="training: megatron, fsdp or deepspeed; serving: vllm, "
                                    "sglang or trtllm; auto: read off the stack")
    tp: Whole = Field(default=1, ge=1, le=B.MAX_GPUS)
    pp: Whole = Field(default=1, ge=1, le=B.MAX_GPUS)
    cp: Whole = Field(default=1, ge=1, le=B.MAX_GPUS)
    ep: Whole = Field(default=1, ge=1, le=B.MAX_GPUS)
    vp: Whole = Field(default=1, ge=1, le=B.MAX_LAYERS,
                      description="virtual pipeline stages per PP rank")
    gpus: Whole = Field(default=8, ge=1, le=B.MAX_GPUS)
    nodes: Whole = Field(default=1, ge=1, le=B.MAX_NODES)
    nic_gbit: Plain = Field(
        default=400.0, ge=B.MIN_NIC_GBIT, le=B.MAX_NIC_GBIT,
        description="scale-out NIC line rate per GPU, Gbit/s"
    )
    token_budget: Amount | None = Field(default=None, ge=B.MIN_TOKENS, le=B.MAX_TOKENS,
                                        description="tokens to train or serve")
    # serving
    osl: Whole | None = Field(default=None, ge=1, le=B.MAX_SEQ_LEN,
                              description="serve: output tokens per request")
    kv_dtype: KvDtype = Field(default="auto", description="auto: fp8 for low-precision recipes")
    ttft_ms: Plain | None = Field(default=None, ge=B.MIN_MS, le=B.MAX_SECONDS * 1000,
                                  description="serve: time-to-first-token limit")
    tpot_ms: Plain | None = Field(default=None, ge=B.MIN_MS, le=B.MAX_SECONDS * 1000,
                                  description="serve/decode: time per output token limit")
    min_tokens_per_user: Plain | None = Field(
        default=None, ge=B.MIN_TOKENS_PER_USER, le=B.MAX_TOKENS_PER_USER,
        description="serve/decode: the interactivity target, output tokens/s each user sees "
                    "(1000 / TPOT in ms)")
    max_batch: Whole = Field(default=2048, ge=1, le=B.MAX_MICRO_BATCH,
                             description="serving engine's batch cap (requests in flight)")

    @model_validator(mode="before")
    @classmethod
    def _resolve_model(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict):
            if isinstance(data.get("model"), str):
                data = {**data, "model": resolve_preset(data["model"])}
            elif isinstance(data.get("model"), dict) and "config" in data["model"]:
                data = {**data, "model": _from_config(data["model"], info)}
            targets = data.get("lora_targets")
            if isinstance(targets, str):  # "all-linear", "q_proj,v_proj"
                data = {**data, "lora_targets": tuple(
                    t.strip() for t in targets.split(",") if t.strip())}
            elif isinstance(targets, list):  # a TOML or JSON array; its items stay strict
                data = {**data, "lora_targets": tuple(targets)}
            if "checkpointing" in data:  # the older boolean form
                data = dict(data)
                ckpt = data.pop("checkpointing")
                if not isinstance(ckpt, bool):
                    raise ValueError("checkpointing must be true or false (or use recompute)")
                if ckpt and data.get("recompute", "full") != "full":
                    raise ValueError("checkpointing = true and recompute disagree")
                data.setdefault("recompute", "full" if ckpt else "none")
        return data

    @model_validator(mode="after")
    def _layout(self) -> Workload:
        self._check_seq_lens()
        self._check_parallelism()
        if self.packed_doc_len is not None and self.packed_doc_len > min(self.seq_lens):
            raise ValueError("packed_doc_len is longer than the shortest sequence")
        self._check_mode_fields()
        self._check_framework()
        self._lora()
        self._check_virtual_stages()
        return self

    def _check_seq_lens(self) -> None:
        """The swept lengths: each within bounds, and each given once."""
        if any(not 1 <= s <= B.MAX_SEQ_LEN for s in self.seq_lens):
            raise ValueError(f"sequence lengths must be 1 to {B.MAX_SEQ_LEN:,}")
        if len(set(self.seq_lens)) != len(self.seq_lens):
            raise ValueError("sequence lengths repeat")

    def _check_parallelism(self) -> None:
        """TP x PP x CP groups, nodes and EP must all split the GPUs (and the experts) evenly."""
        group = self.tp * self.pp * self.cp
        if self.gpus % group:
            raise ValueError(f"{self.gpus} GPUs is not a multiple of TP x PP x CP = {group}")
        if self.gpus % self.nodes:
            raise ValueError(f"{self.gpus} GPUs do not split evenly over {self.nodes} nodes")
        if self.training and self.dp % self.ep:
            raise ValueError(f"ep {self.ep} must divide the data-parallel size {self.dp}")
        if self.ep > 1 and not self.model.experts:
            raise ValueError("ep > 1 needs a mixture-of-experts model")
        if self.model.experts and self.model.experts % self.ep:
            raise ValueError(f"ep {self.ep} must divide the {self.model.experts} experts")

    def _check_mode_fields(self) -> None:
        """Fields that belong to training or to serving are given only in those modes."""
        if not self.training and (self.zero_stage or self.offload_optimizer
                                  or self.recompute != "none"):
            raise ValueError("zero_stage, offload_optimizer and recompute are training options")
        if self.mode in ("decode", "serve") and self.packed_doc_len is not None:
            raise ValueError("packing does not apply to decode or serving")
        if self.mode == "serve" and self.osl is None:
            raise ValueError("serving needs the output tokens per request (OSL)")
        if self.mode != "serve" and self.osl is not None:
            raise ValueError("osl applies to mode = serve")
        if self.training and self.min_tokens_per_user is not None:
            raise ValueError("min_tokens_per_user is a serving target")

    def _check_framework(self) -> None:
        """A training mode runs on a training framework, a serving mode on a serving engine."""
        if self.training and self.framework in SERVING_ENGINES:
            raise ValueError(f"framework {self.framework} is a serving engine; training runs on "
                             f"{', '.join(TRAINING_FRAMEWORKS)}")
        if not self.training and self.framework in TRAINING_FRAMEWORKS:
            raise ValueError(f"framework {self.framework} is a training framework; serving runs "
                             f"on {', '.join(SERVING_ENGINES)}")

    def _check_virtual_stages(self) -> None:
        """Interleaved pipeline stages need a pipeline, and the layers must split into them."""
        if self.vp > 1 and self.pp == 1:
            raise ValueError("vp > 1 needs pp > 1")
        if self.vp > 1 and (self.model.layers % (self.pp * self.vp)):
            raise ValueError(f"layers {self.model.layers} do not split into pp x vp = "
                             f"{self.pp * self.vp} chunks")

    def _lora(self) -> None:
        """LoRA's own fields: only in mode = lora, and consistent with the recipe."""
        if self.mode != "lora":
            moved = [k for k, v in LORA_DEFAULTS.items() if getattr(self, k) != v]
            if moved:
                raise ValueError(f"{moved[0]} applies to mode = lora (full fine-tuning and "
                                 "pre-training train every weight)")
            return
        targets = self.lora_targets
        if len(set(targets)) != len(targets):
            raise ValueError("lora_targets repeat a layer")
        if "all-linear" in targets and len(targets) > 1:
            raise ValueError("lora_targets: all-linear already names every layer; give it alone")
        if "qkv_proj" in targets and {"q_proj", "k_proj", "v_proj"} & set(targets):
            raise ValueError("lora_targets: qkv_proj is the fused q_proj, k_proj and v_proj; "
                             "give one or the others")
        if self.base_format in DEQUANTISED and self.precision in LOW_PRECISION:
            raise ValueError(f"base_format {self.base_format} is dequantised to 16 bits before "
                             f"every GEMM: precision {self.precision} needs base_format bf16 "
                             "or fp8")
        if self.allow_quantized_base and self.precision in LOW_PRECISION:
            raise ValueError(f"allow_quantized_base: a 4-bit base runs its GEMMs in 16 bits, "
                             f"not {self.precision}")
        if self.lora_rank > self.model.hidden:
            raise ValueError(f"lora_rank {self.lora_rank} exceeds the model's hidden size "
                             f"{self.model.hidden}")

    @property
    def training(self) -> bool:
        return self.mode in TRAINING_MODES

    @property
    def checkpointing(self) -> bool:
        return self.recompute == "full"

    @property
    def dp(self) -> int:
        return self.gpus // (self.tp * self.pp * self.cp)

    @property
    def gpus_per_node(self) -> int:
        return self.gpus // self.nodes

    @property
    def accumulation(self) -> int:
        """Micro-batches per optimizer step on each data-parallel rank (at least one)."""
        gb = self.global_batch or self.micro_batch * self.dp
        return max(1, gb // (self.micro_batch * self.dp))

    @property
    def batch_splits(self) -> bool:
        """Whether the global batch splits evenly into micro-batches over the DP ranks."""
        return self.global_batch is None or self.global_batch % (self.micro_batch * self.dp) == 0

    @property
    def sequences_per_step(self) -> int:
        return self.global_batch or self.micro_batch * self.dp

    def global_batch_on(self, gpus: int) -> int | None:
        """The global batch when this recipe runs on `gpus` GPUs. Unless the answers give one,
        fewer GPUs keep this layout's batch and accumulate gradients, as a user shrinking a
        run does (a batch that shrank with the count would leave an offloaded 1-GPU run one
        sequence per optimizer step, several times slower per GPU than it runs); as many or
        more bring their own micro-batch each."""
        if self.global_batch is not None or not self.training or gpus >= self.gpus:
            return self.global_batch
        return self.sequences_per_step

    @property
    def tpot_limit_ms(self) -> float | None:
        """The time per output token a serving layout must meet: the stated limit, or the
        interactivity target's 1000 / tokens-per-user, whichever is tighter."""
        limits = [x for x in (self.tpot_ms, 1000.0 / self.min_tokens_per_user
                              if self.min_tokens_per_user else None) if x is not None]
        return min(limits) if limits else None

    @property
    def kv_bytes(self) -> float:
        """Bytes per cached KV element: the stated dtype, else fp8 for low-precision recipes."""
        if self.kv_dtype != "auto":
            return KV_BYTES[self.kv_dtype]
        return 1.0 if self.precision in LOW_PRECISION else 2.0


def _from_config(model: dict[str, Any], info: ValidationInfo) -> ModelSpec:
    """`model = { config = "PATH" }`: the config.json is read by whoever read the answers
    (a reader in the validation context, `read_config`: core touches no disk)."""
    ref = model["config"]
    if set(model) != {"config"} or not isinstance(ref, str):
        raise ValueError('model = { config = "PATH/config.json" } names a Hugging Face config '
                         "and nothing else")
    read = (info.context or {}).get("read_config")
    if read is None:
        raise ValueError("a model config is read from an answers file; here give the model's "
                         "dimensions")
    spec: ModelSpec = read(ref)
    return spec
