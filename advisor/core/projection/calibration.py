"""Every constant the projection leans on, with its value, its uncertainty and where it came from.

Three kinds live here, and `fitted_to` tells them apart:

- derived: counted from the model or copied from a published measurement
  (`fitted_to` empty, `source` says which);
- assumed: a rule of thumb with a stated spread (`fitted_to` empty, `kind`
  "assumption");
- fitted: solved from published cases in advisor/published_cases (`fitted_to` names the
  case ids). `advisor validate` marks those cases in-sample, so the error it
  reports on the held-out cases is not circular, and `advisor validate
  --refit` solves them again from the case files to show the shipped values
  still match.

`sigma` is a relative one-standard-deviation uncertainty; the verdict's band
is built from these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

UPG = "https://github.com/stas00/ml-engineering/blob/master/insights/when-to-upgrade-gpus/README.md"
ACC = "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md"
NET = "https://github.com/stas00/ml-engineering/blob/master/network/benchmarks/README.md"
SIZ = "https://github.com/jman4162/Sizing-AI-Training-by-Cost-per-Memory-Bandwidth"
FA = "https://github.com/Dao-AILab/flash-attention"
ZERO = "https://arxiv.org/abs/1910.02054 (ZeRO, 16 bytes/param for mixed-precision Adam)"
KORTH = "https://arxiv.org/abs/2205.05198 (Korthikanti et al., activation memory per layer)"

Kind = Literal["fitted", "derived", "assumption"]


@dataclass(frozen=True)
class Note:
    """Provenance of one constant."""

    kind: Kind
    unit: str
    sigma: float
    source: str
    fitted_to: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttentionCurve:
    """In-step attention throughput of one kernel generation on one class of architecture.

    Throughput in model FLOPs (the 6*s^2*d*h*L causal training convention) is
    `e_max * peak_bf16 * s / (s + s_half)`: it saturates with the per-sequence
    attention span `s`, as the published FlashAttention sweeps do.
    """

    e_max: float
    s_half: float
    sigma: float
    source: str
    fitted_to: tuple[str, ...] = ()


# Kernel generation x the MMA path the architecture's peak needs. FA2 uses the
# Ampere mma.sync path: full rate on sm_8x and sm_12x, a fraction of the peak
# on Hopper (wgmma) and datacentre Blackwell (tcgen05).
ATTENTION_CURVES: dict[tuple[str, str], AttentionCurve] = {
    ("fa2", "ampere"): AttentionCurve(
        0.623, 473.0, 0.12,
        f"{FA} README, FA2 fwd+bwd causal hdim128 on A100: 99..189 TFLOPS for 512..16k, "
        "least-squares fit of r_max*s/(s+s_half); isolated kernel, not in-step",
    ),
    ("fa2", "hopper"): AttentionCurve(
        0.343, 546.0, 0.12,
        f"{FA} README, FA2 fwd+bwd causal hdim128 on H100: 163..328 TFLOPS for 512..16k",
    ),
    ("fa2", "blackwell"): AttentionCurve(
        0.15, 500.0, 0.3,
        f"{FA} issue #1589: FA2 on B200 forward ~307-381 TFLOPS (hdim64), i.e. ~15% of peak",
    ),
    ("fa3", "hopper"): AttentionCurve(
        0.4796, 500.0, 0.10,
        f"{UPG}: FA3 in-step 447 TFLOPS on H200 at 8k (step decomposition); s_half from the "
        f"shape of {FA} FA3 fwd and FA2 fwd+bwd sweeps (473..546)",
        fitted_to=("upg-8k-decomposition",),
    ),
    ("fa4", "blackwell"): AttentionCurve(
        0.4134, 944.0, 0.12,
        f"{UPG}: FA4 in-step 834 TFLOPS on B200 at 8k; s_half solved so FA4/FA3 grows from "
        "1.88x at 8k to 1.95x at 32k as the isolated fwd+bwd micro-benchmark measured "
        f"(beta kernel, +-10% box to box per {FA} #2570)",
        fitted_to=("upg-8k-decomposition", "upg-fa4-vs-fa3-isolated"),
    ),
}

# Architecture id -> (MMA class, kernel HF/torch picks by default).
ARCH_ATTENTION: dict[str, tuple[str, str]] = {
    "sm_80": ("ampere", "fa2"),
    "sm_86": ("ampere", "fa2"),
    "sm_89": ("ampere", "fa2"),
    "sm_120": ("ampere", "fa2"),
    "sm_121": ("ampere", "fa2"),
    "sm_90": ("hopper", "fa3"),
    "sm_100": ("blackwell", "fa4"),
    "sm_103": ("blackwell", "fa4"),
}


@dataclass(frozen=True)
class Calibration:
    """The numbers. `notes()` gives each one's provenance; tests keep the two in step."""

    gemm_efficiency: float = 0.8698
    host_s_per_param: float = 2.503e-11
    cpu_adam_params_per_s: float = 4.341e9
    framework_floor_gib: float = 8.12
    usable_memory_fraction: float = 0.922
    attn_fwd_speedup: float = 1.347
    generic_attn_of_matmul: float = 0.60
    generic_attn_s_half: float = 1000.0
    hbm_efficiency: float = 0.80
    collective_efficiency: float = 0.80
    nic_efficiency: float = 0.80
    pcie_efficiency: float = 0.88
    comm_overlap: float = 0.80
    fleet_mamf_efficiency: float = 0.78
    elementwise_passes: float = 6.0
    elementwise_passes_fused: float = 5.0
    logit_traffic_bytes: float = 34.0
    logit_traffic_bytes_fused: float = 6.0
    inference_floor_gib: float = 2.0
    kv_overhead: float = 1.2
    launch_s_per_layer: float = 3.0e-5
    idle_power_fraction: float = 0.10
    model_sigma: float = 0.05
    attention: dict[tuple[str, str], AttentionCurve] = field(
        default_factory=lambda: dict(ATTENTION_CURVES)
    )

    @staticmethod
    def notes() -> dict[str, Note]:
        return NOTES


NOTES: dict[str, Note] = {
    "gemm_efficiency": Note(
        "fitted", "fraction of MAMF", 0.06,
        f"{UPG}: 'everything else' bucket at 8k, ZeRO-2, mbs=1 (463 TFLOPS on H200, 771 on B200), "
        "solved together with host_s_per_param; the two GPUs share one value",
        ("upg-8k-decomposition",),
    ),
    "host_s_per_param": Note(
        "fitted", "s per local parameter per optimizer step", 0.3,
        f"{UPG}: same solve as gemm_efficiency; the per-step time that does not shrink on a faster "
        "GPU (gradient bucketing, clipping, ZeRO bookkeeping, syncs), amortised over the tokens "
        "of a step. Same host software on both sides. The cases hold one micro-step per step, "
        "so charging it per step rather than per micro-step is a modelling choice",
        ("upg-8k-decomposition",),
    ),
    "cpu_adam_params_per_s": Note(
        "fitted", "parameters/s per node", 0.3,
        f"{UPG}: the 8k point of the ZeRO-3 + CPU AdamW offload sweep (141 vs 167 TFLOPS, 1.19x): "
        "the host-side optimizer step both GPUs wait for",
        ("upg-sweep-8k",),
    ),
    "framework_floor_gib": Note(
        "fitted", "GiB", 0.25,
        f"{UPG}: intercept 12.6 GiB of the fitted peak memory 12.6 + 0.00043 GiB/token, less the "
        "ZeRO-3 parameter and gradient shards (buffers, prefetch, allocator slack)",
        ("upg-peak-memory",),
    ),
    "usable_memory_fraction": Note(
        "fitted", "of the labelled capacity", 0.03,
        f"{UPG}: 'H200's usable budget is ~130 GiB' of its 141 GB label",
        ("upg-peak-memory",),
    ),
    "attn_fwd_speedup": Note(
        "derived", "forward rate / fwd+bwd rate", 0.1,
        f"{FA} FA3 causal hdim128 forward 602 TFLOPS at 8k on H100, over the 447 TFLOPS fwd+bwd "
        f"in-step rate at 8k on H200 ({UPG}); same silicon",
    ),
    "generic_attn_of_matmul": Note(
        "assumption", "attention rate / matmul MAMF", 0.25,
        "median of the published kernels' saturated rate over the same GPU's MAMF: FA2/A100 0.72, "
        "FA3/H200 0.60, FA4/B200 0.53; used where no curve is published (AMD, TPU, Gaudi)",
    ),
    "generic_attn_s_half": Note(
        "assumption", "tokens", 0.5, "between the FA3 (500) and FA4 (944) curves' half points",
    ),
    "hbm_efficiency": Note(
        "assumption", "achievable / peak HBM bandwidth", 0.08,
        f"{SIZ} default utilisation 0.75 (range 0.6-0.9); large copies reach 80-90% of peak",
    ),
    "collective_efficiency": Note(
        "derived", "all-reduce busbw / unidirectional link", 0.15,
        f"{NET}: 'expect ~80% of the unidirectional spec' (A100 78%, H200 ring 82%)",
        ("net-a100-busbw", "net-h200-ring-busbw"),
    ),
    "nic_efficiency": Note(
        "assumption", "achievable / NIC line rate", 0.2,
        f"{NET} rule of thumb; its 4-node B200 sweep implies 73% per GPU (held out)",
    ),
    "pcie_efficiency": Note(
        "derived", "achievable / PCIe spec", 0.05, f"{NET}: PCIe5 H2D 55.43 of 63 GB/s (88%)",
    ),
    "comm_overlap": Note(
        "assumption", "fraction of the overlap window usable", 0.2,
        "gradient reduction hides behind backward compute; NCCL kernels steal some SMs and "
        "bandwidth, so not all of the window is usable",
    ),
    "fleet_mamf_efficiency": Note(
        "derived", "MAMF / peak", 0.12, f"{ACC}: median of the 12 published bf16 MAMF efficiencies",
    ),
    "elementwise_passes": Note(
        "derived", "hidden-vector reads+writes per layer per token", 0.5,
        f"{SIZ}: c_act default 6.0 (activation traffic, training)",
    ),
    "elementwise_passes_fused": Note(
        "derived", "hidden-vector reads+writes per layer per token", 0.5,
        f"{SIZ}: 5.0 with FlashAttention/fused kernels",
    ),
    "logit_traffic_bytes": Note(
        "derived", "bytes per vocab entry per token", 0.3,
        "counted: bf16 logits, fp32 upcast, log-softmax and their backward, unfused",
    ),
    "logit_traffic_bytes_fused": Note(
        "derived", "bytes per vocab entry per token", 0.5,
        "counted: chunked fused linear cross-entropy writes each logit chunk once, reads it "
        "back once",
    ),
    "inference_floor_gib": Note(
        "assumption", "GiB", 0.5, "CUDA graphs, workspaces and the allocator of a serving engine",
    ),
    "kv_overhead": Note(
        "derived", "x KV bytes", 0.1,
        f"{SIZ} KV-cache notebook: overhead factor 1.1-1.3, helper default 1.2",
    ),
    "launch_s_per_layer": Note(
        "assumption", "s per layer per forward or backward pass", 0.5,
        "a transformer layer is a few dozen kernels at a few microseconds of launch each; "
        "mostly hidden behind long kernels, never zero for a small decode step",
    ),
    "idle_power_fraction": Note(
        "assumption", "idle / TDP", 0.5,
        "the DFlash write-up: ~30-60 W idle on a 600 W RTX PRO 6000; used when the catalog has no "
        "idle figure",
    ),
    "model_sigma": Note(
        "derived", "relative", 0.0,
        "the model's own structural error: at least the median |error| `advisor validate` reports "
        "on held-out speedup cases (a test keeps it so)",
    ),
}

CAL = Calibration()

# Optimizer traffic per trainable parameter per step (GPU): AdamW reads fp32 master, m, v and
# the bf16 grad, writes master, m, v and the bf16 weight copy. 8-bit Adam keeps m, v in 1 byte.
OPT_TRAFFIC_BYTES: dict[str, float] = {"adamw": 28.0, "adamw8bit": 16.0, "sgd": 20.0}
# Optimizer state held per trainable parameter (fp32 master + moments) [ZERO].
OPT_STATE_BYTES: dict[str, float] = {"adamw": 12.0, "adamw8bit": 6.0, "sgd": 8.0}

# Per-GPU relative uncertainty of a rate, by where it came from.
SOURCE_SIGMA: dict[str, float] = {
    "probe": 0.03,
    "catalog-mamf": 0.05,  # ACC: GPUs in one node differ by 5%+, and software moves MAMF
    "transferred-efficiency": 0.15,
    "catalog-spec": 0.08,
    "published-kernel-curve": 0.10,
    "generic-kernel-ratio": 0.25,
}
BETA_KERNEL_SIGMA = 0.10  # extra spread when the software gate says the kernel is beta
