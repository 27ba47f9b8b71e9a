"""The workload form's fields: what each one is called, how it reads what is typed, where
it applies, and its default, which is always the engine's own (`Workload.model_fields`).

No widgets here: the form renders these, the state uses `applies` to leave out what a
mode does not take, and the tests check the defaults against core's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from advisor.core import bounds as B
from advisor.core import vocabulary
from advisor.tui.numbers import NumberSpec, format_count, format_seq_lens, parse_list

Kind = Literal["int", "float", "list", "choice"]
TRAINING = frozenset({"pretrain", "finetune", "lora"})
SERVING = frozenset({"prefill", "decode", "serve"})
ALL = TRAINING | SERVING

MODES = (("pre-training", "pretrain"), ("fine-tuning", "finetune"),
         ("LoRA fine-tuning", "lora"), ("serving", "serve"),
         ("prefill only", "prefill"), ("decode only", "decode"))
PRECISIONS = tuple((name, name) for name in vocabulary.PRECISIONS)
SHARDING = (("ZeRO-0 (DDP)", 0), ("ZeRO-1 (optimizer)", 1), ("ZeRO-2 (+ grads)", 2),
            ("ZeRO-3 / FSDP", 3))
RECOMPUTE = (("none", "none"), ("selective", "selective"), ("full", "full"))
OPTIMIZERS = (("AdamW", "adamw"), ("AdamW 8-bit", "adamw8bit"), ("paged AdamW", "paged_adamw"),
              ("paged AdamW 8-bit", "paged_adamw8bit"), ("SGD", "sgd"))
LORA = frozenset({"lora"})
BASES = (("bf16", "bf16"), ("fp8", "fp8"), ("int8 (LLM.int8)", "int8"),
         ("nf4 (QLoRA)", "nf4"), ("int4 (GPTQ/AWQ)", "int4"))
TARGETS = (("all linear", ("all-linear",)),
           ("attention: q, k, v, o", ("q_proj", "k_proj", "v_proj", "o_proj")),
           ("q and v (PEFT's default)", ("q_proj", "v_proj")),
           ("MLP: gate, up, down", ("gate_proj", "up_proj", "down_proj")),
           ("fused QKV and output", ("qkv_proj", "o_proj")))
"""The adapted layers people pick; answers may name any other set (PEFT's module names)."""
YES_NO = (("no", False), ("yes", True))
KV = tuple((name, name) for name in vocabulary.KV_DTYPES)
KERNELS = (("auto", "auto"), ("FlashAttn-2", "fa2"), ("FlashAttn-3", "fa3"),
           ("FlashAttn-4", "fa4"), ("cuDNN", "cudnn"), ("torch SDPA", "sdpa"),
           ("CK (AMD)", "ck"), ("vendor", "vendor"))
FRAMEWORKS = (("auto", "auto"), ("Megatron", "megatron"), ("FSDP", "fsdp"),
              ("DeepSpeed", "deepspeed"))
ENGINES = (("auto", "auto"), ("vLLM", "vllm"), ("SGLang", "sglang"),
           ("TensorRT-LLM", "trtllm"))
MLP = (("gated (SwiGLU)", True), ("plain (GELU)", False))
BASIS = (("re-tuned layout on each GPU", "retuned"), ("your layout as run", "as_run"))


@dataclass(frozen=True)
class FieldDef:
    key: str
    label: str
    kind: Kind
    modes: frozenset[str] = ALL
    advanced: bool = False
    spec: NumberSpec | None = None
    choices: tuple[tuple[str, Any], ...] = ()
    unit: str = ""
    hint: str = ""
    """What the value means, shown beside a valid entry."""

    def parse(self, text: str) -> Any:
        """The typed text as the engine's value; blank is None (the default); ValueError."""
        if not text.strip():
            return None
        assert self.spec is not None
        if self.kind == "list":
            return parse_list(text, self.spec)
        from advisor.tui.numbers import parse_number

        value = parse_number(text, self.spec)
        return int(value) if self.kind == "int" else value


def _int(what: str, low: int, high: int, example: str, binary_k: bool = False) -> NumberSpec:
    return NumberSpec(what, integer=True, low=low, high=high, example=example,
                      binary_k=binary_k)


SEQ = NumberSpec("sequence length", integer=True, low=B.MIN_SEQ_LEN, high=B.MAX_SEQ_LEN,
                 binary_k=True, example="4k, 32k")
FIELDS: tuple[FieldDef, ...] = (
    FieldDef("mode", "mode", "choice", choices=MODES),
    FieldDef("seq_lens", "sequence lengths", "list", TRAINING | {"prefill", "decode"},
             spec=SEQ, unit="tokens", hint="the sweep; the first is the headline"),
    FieldDef("seq_lens", "input tokens (ISL)", "list", frozenset({"serve"}), spec=SEQ,
             unit="tokens", hint="per request; the first is the headline"),
    FieldDef("osl", "output tokens (OSL)", "int", frozenset({"serve"}),
             spec=_int("output tokens", 1, B.MAX_SEQ_LEN, "512"), unit="tokens",
             hint="per request"),
    FieldDef("gpus", "GPUs", "int", spec=_int("GPUs", 1, B.MAX_GPUS, "8"),
             hint="how many run the job today"),
    FieldDef("precision", "precision", "choice", choices=PRECISIONS,
             hint="every GPU's, unless Targets gives one its own"),
    FieldDef("kv_dtype", "KV cache format", "choice", SERVING, choices=KV,
             hint="auto: fp8 for fp8/fp4 recipes"),
    FieldDef("base_format", "base format", "choice", LORA, choices=BASES,
             hint="the frozen base as held; nf4 and int4 are dequantised before each GEMM"),
    FieldDef("lora_rank", "LoRA rank", "int", LORA, spec=_int("LoRA rank", 1, B.MAX_WIDTH, "16"),
             hint="adapter rank: sets the trained weights"),
    FieldDef("lora_targets", "LoRA targets", "choice", LORA, choices=TARGETS,
             hint="the layers that carry adapters"),
    FieldDef("allow_quantized_base", "may quantize base", "choice", LORA, choices=YES_NO,
             hint="where the base fits nowhere, the re-tune may hold it 4-bit (QLoRA) or "
                  "offload it"),
    FieldDef("token_budget", "token budget", "float",
             spec=NumberSpec("token budget", low=B.MIN_TOKENS, high=B.MAX_TOKENS,
                             example="300B"),
             unit="tokens", hint="to train or serve: sets wall-clock, $ and energy"),
    # the layout as run today (the Advanced group, but for UP_FRONT), kernels, serving limits
    FieldDef("global_batch", "global batch", "int", TRAINING, True,
             _int("global batch", 1, B.MAX_GLOBAL_BATCH, "256"), unit="sequences",
             hint="per optimizer step"),
    FieldDef("micro_batch", "micro-batch", "int", TRAINING, False,
             _int("micro-batch", 1, B.MAX_MICRO_BATCH, "2"), unit="sequences",
             hint="per GPU per step"),
    FieldDef("micro_batch", "requests in flight", "int", SERVING, False,
             _int("requests in flight", 1, B.MAX_MICRO_BATCH, "64"), hint="per replica"),
    FieldDef("zero_stage", "sharding", "choice", TRAINING, True, choices=SHARDING),
    FieldDef("recompute", "recompute", "choice", TRAINING, True, choices=RECOMPUTE),
    FieldDef("optimizer", "optimizer", "choice", TRAINING, True, choices=OPTIMIZERS),
    FieldDef("offload_optimizer", "offload optimizer", "choice", TRAINING, True,
             choices=YES_NO),
    FieldDef("fused_kernels", "fused kernels", "choice", TRAINING, True, choices=YES_NO),
    FieldDef("offload_frozen_weights", "offload frozen base", "choice", LORA, True,
             choices=YES_NO, hint="the base on the host, streamed to the GPU each pass"),
    FieldDef("double_quant", "double quantization", "choice", LORA, True, choices=YES_NO,
             hint="nf4: its absmax constants quantized too (QLoRA's)"),
    FieldDef("tp", "tensor parallel", "int", ALL, True, _int("TP", 1, B.MAX_GPUS, "2"),
             hint="GPUs per TP group"),
    FieldDef("pp", "pipeline parallel", "int", ALL, True, _int("PP", 1, B.MAX_GPUS, "2"),
             hint="pipeline stages"),
    FieldDef("vp", "virtual stages", "int", TRAINING, True, _int("VP", 1, B.MAX_LAYERS, "2"),
             hint="per PP rank (interleaving)"),
    FieldDef("cp", "context parallel", "int", TRAINING | {"prefill"}, True,
             _int("CP", 1, B.MAX_GPUS, "2"), hint="GPUs splitting one sequence"),
    FieldDef("ep", "expert parallel", "int", ALL, True, _int("EP", 1, B.MAX_GPUS, "8"),
             hint="mixture-of-experts models"),
    FieldDef("nodes", "nodes", "int", ALL, True, _int("nodes", 1, B.MAX_NODES, "2")),
    FieldDef("packed_doc_len", "packed doc length", "int", TRAINING | {"prefill"}, True,
             _int("packed document length", 1, B.MAX_SEQ_LEN, "1k", binary_k=True),
             unit="tokens",
             hint="mean document length when packed with a doc mask"),
    FieldDef("ttft_ms", "TTFT limit (ms)", "float", frozenset({"serve", "prefill"}), False,
             NumberSpec("TTFT limit", low=B.MIN_MS, high=B.MAX_SECONDS * 1000,
                        suffixes=False, example="500"), unit="ms",
             hint="time to first token"),
    FieldDef("tpot_ms", "TPOT limit (ms)", "float", frozenset({"serve", "decode"}), False,
             NumberSpec("TPOT limit", low=B.MIN_MS, high=B.MAX_SECONDS * 1000,
                        suffixes=False, example="50"), unit="ms",
             hint="time per output token"),
    FieldDef("min_tokens_per_user", "min tokens/s per user", "float",
             frozenset({"serve", "decode"}), False,
             NumberSpec("min tokens/s per user", low=B.MIN_TOKENS_PER_USER,
                        high=B.MAX_TOKENS_PER_USER, suffixes=False, example="50"),
             unit="tokens/s", hint="interactivity target: 1000 / TPOT ms"),
    FieldDef("max_batch", "max batch", "int", SERVING, False,
             _int("max batch", 1, B.MAX_MICRO_BATCH, "256"), hint="the serving engine's cap"),
    FieldDef("attention_kernel", "attention kernel", "choice", ALL, True, choices=KERNELS,
             hint="auto: the kernel the stack runs on each GPU"),
    FieldDef("framework", "framework", "choice", TRAINING, choices=FRAMEWORKS,
             hint="sets the per-step host overhead"),
    FieldDef("framework", "serving engine", "choice", SERVING, choices=ENGINES,
             hint="sets per-request overheads and the attention kernels"),
    FieldDef("nic_gbit", "NIC Gbit/s", "float", ALL, True,
             NumberSpec("NIC line rate", low=B.MIN_NIC_GBIT, high=B.MAX_NIC_GBIT, suffixes=False,
                        example="400"),
             unit="Gbit/s", hint="scale-out, per GPU"),
)

UP_FRONT = frozenset({"tp", "pp", "ep"})
"""Layout fields the form shows above the Advanced group although they describe the layout as
run: the parallelism a multi-GPU job is known by (a serving user looked for TP under
Advanced and did not find it)."""

DIMS: tuple[FieldDef, ...] = tuple(
    FieldDef(key, label, "int", spec=_int(label, low, high, example))
    for key, label, low, high, example in (
        ("layers", "layers", 1, B.MAX_LAYERS, "32"),
        ("hidden", "hidden size", 1, B.MAX_WIDTH, "4096"),
        ("heads", "attention heads", 1, B.MAX_HEADS, "32"),
        ("kv_heads", "KV heads", 1, B.MAX_HEADS, "8"),
        ("ffn", "FFN size", 1, B.MAX_WIDTH, "14336"),
        ("vocab", "vocabulary", 1, B.MAX_VOCAB, "128256")))
"""A custom model's dimensions (the engine has no defaults for them)."""
MLP_KIND = FieldDef("gated_mlp", "MLP", "choice", choices=MLP,
                    hint="gated: three matrices (Llama); plain: two (GPT-2/3, BLOOM)")
"""A custom model's MLP: `--mlp gated|plain` on the command line, `gated_mlp` in answers."""


def field_for(key: str, mode: str) -> FieldDef | None:
    """The field as a mode shows it (micro-batch reads "requests in flight" when serving)."""
    return next((f for f in FIELDS if f.key == key and mode in f.modes), None)


def any_field_def(key: str) -> FieldDef:
    return next(f for f in FIELDS if f.key == key)


def applies(key: str, mode: str, value: Any = None) -> bool:
    """Whether the engine takes this field (with this value) in this mode: serving has no
    optimizer to shard, and runs on a serving engine, not a training framework."""
    if key in ("model", "mode"):
        return True
    f = field_for(key, mode)
    if f is None:
        return False
    return (value is None or f.kind != "choice" or any(v == value for _, v in f.choices)
            or isinstance(value, tuple))  # a set of LoRA targets an answers file named


@cache
def core_default(key: str) -> Any:
    """The engine's default for a workload field: the one source of defaults."""
    from advisor.core import Workload

    info = Workload.model_fields[key]
    return None if info.is_required() else info.default


def is_required(key: str) -> bool:
    from advisor.core import Workload

    return Workload.model_fields[key].is_required()


def choice_label(f: FieldDef, value: Any) -> str:
    return next((label for label, v in f.choices if v == value), str(value))


PLACEHOLDER = {"global_batch": "auto"}
"""What a blank field means, where the default is "none" rather than a value."""

SHOW: dict[str, Callable[[Any], str]] = {
    "global_batch": lambda v: "one micro-batch per data-parallel rank" if v is None else str(v),
    "token_budget": lambda v: "none: jobs are priced for one hour" if v is None
    else format_count(v),
    "packed_doc_len": lambda v: "not packed" if v is None else str(v),
    "ttft_ms": lambda v: "no limit" if v is None else f"{v:g} ms",
    "tpot_ms": lambda v: "no limit" if v is None else f"{v:g} ms",
    "min_tokens_per_user": lambda v: "none: the curve is shown" if v is None else f"{v:g}",
    "osl": lambda v: "none: required for serving" if v is None else str(v),
    "seq_lens": lambda v: format_seq_lens(v),
    "nic_gbit": lambda v: f"{v:g}",
}


def show_value(f: FieldDef, value: Any) -> str:
    """A value for reading: the choice's label, or the figure."""
    if f.kind == "choice":
        if isinstance(value, str):  # a default as core lists it ("0", "False", "megatron")
            match = next((label for label, v in f.choices if str(v) == value or (
                isinstance(v, tuple) and ", ".join(v) == value)), None)  # LoRA targets
            if match is not None:
                return match
        return choice_label(f, value)
    if isinstance(value, str):  # already words (a default as core lists it)
        return value
    if f.key in SHOW:
        return SHOW[f.key](value)
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


PERCENT = frozenset({"mfu", "attention_share"})
"""Measured figures typed as percentages (27 for 27% MFU); answers hold fractions."""
MEASURED: tuple[FieldDef, ...] = (
    FieldDef("tokens_per_s_per_gpu", "tokens/s per GPU", "float", TRAINING | {"prefill"},
             spec=NumberSpec("measured tokens/s", low=0, low_open=True, example="14.8k"),
             unit="tokens/s", hint="what your job does today, per GPU"),
    FieldDef("tokens_per_s_per_gpu", "output tokens/s per GPU", "float",
             frozenset({"serve", "decode"}),
             spec=NumberSpec("measured tokens/s", low=0, low_open=True, example="2.4k"),
             unit="tokens/s", hint="generated tokens per second, per GPU"),
    FieldDef("step_s", "step time (s)", "float", TRAINING,
             spec=NumberSpec("step time", low=B.MIN_STEP_S, suffixes=False, example="2.4"),
             unit="s", hint="per optimizer step, at your global batch"),
    FieldDef("mfu", "MFU (%)", "float", TRAINING,
             spec=NumberSpec("MFU", low=0, low_open=True, high=100, suffixes=False,
                             example="27"), unit="%", hint="model FLOPs utilisation"),
    FieldDef("concurrency", "requests in flight", "int", SERVING,
             spec=_int("requests in flight", 1, 1 << 16, "64"),
             hint="per replica, when you measured"),
    FieldDef("ttft_ms", "TTFT (ms)", "float", frozenset({"serve", "prefill"}),
             spec=NumberSpec("measured TTFT", low=B.MIN_MS, example="180"), unit="ms"),
    FieldDef("tpot_ms", "TPOT (ms)", "float", frozenset({"serve", "decode"}),
             spec=NumberSpec("measured TPOT", low=B.MIN_MS, example="25"), unit="ms"),
    FieldDef("attention_share", "attention share (%)", "float", TRAINING,
             spec=NumberSpec("attention share", low=0, high=100, suffixes=False,
                             example="35"), unit="%",
             hint="of the step's GPU time, from a profile (optional)"),
    FieldDef("peak_memory_gib", "peak memory (GiB)", "float",
             spec=NumberSpec("peak memory", low=0, low_open=True, suffixes=False,
                             example="71.5"), unit="GiB", hint="optional"),
)
"""What the user measured on the current GPU today (`[measured]` in answers,
`--measured-*` on the command line): the decision is anchored on it."""
