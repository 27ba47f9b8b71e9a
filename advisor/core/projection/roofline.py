"""The per-bucket roofline: FLOPs and bytes per token, timed on each GPU's achievable rates.

A step is split into buckets that are limited by different things:

- dense: the GEMMs (6N per trained token, 2N served), bound by the matmul
  rate or, when few tokens share each weight read, by HBM bandwidth;
- attention: 6*s^2*d*h*L per causal training sequence (sum of len_i^2 when
  packed), at the kernel's own rate, which rises with sequence length;
- elementwise: norms, activations, residuals, logits: HBM traffic only;
- optimizer: state traffic on the GPU, or the host when it is offloaded;
- communication: what is left of DP/ZeRO/TP/CP/EP traffic after overlap;
- overhead: host time that a faster GPU does not shrink: kernel launches per
  layer and pass, and per-step framework work per parameter (bucketing,
  clipping, ZeRO bookkeeping), which a step of few tokens cannot amortise.

Each compute bucket takes max(FLOPs / rate, bytes / bandwidth); the buckets
run one after another on a GPU's stream, so the step is their sum. This is
what makes a dense path at a small micro-batch track the HBM and host side
instead of the FLOPS ratio. Everything is numpy over (GPU, sequence length),
so a 30 x 8 sweep is one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from advisor.core.model.workload import WEIGHT_BYTES, Workload
from advisor.core.projection.calibration import CAL, OPT_TRAFFIC_BYTES, Calibration
from advisor.core.projection.rates import GpuRates

BUCKETS: tuple[str, ...] = (
    "dense", "attention", "elementwise", "optimizer", "communication", "overhead",
)
RESOURCES: tuple[str, ...] = ("compute", "memory", "network", "host")
COMPUTE, MEMORY, NETWORK, HOST = range(4)

Array = np.ndarray


@dataclass(frozen=True)
class Hardware:
    """Column vectors (one row per GPU) of the rates in GpuRates, in FLOP/s and B/s."""

    gemm: Array
    gemm_bf16: Array
    attn_max: Array
    attn_s_half: Array
    hbm: Array
    link: Array
    nic: Array
    host: Array
    peak: Array

    @classmethod
    def of(cls, rates: Sequence[GpuRates]) -> Hardware:
        def col(values: list[float], scale: float) -> Array:
            return np.asarray(values, dtype=float).reshape(-1, 1) * scale

        return cls(
            gemm=col([r.gemm_tflops for r in rates], 1e12),
            gemm_bf16=col([r.gemm_bf16_tflops for r in rates], 1e12),
            attn_max=col([r.attn_max_tflops for r in rates], 1e12),
            attn_s_half=col([r.attn_s_half for r in rates], 1.0),
            hbm=col([r.hbm_gbps for r in rates], 1e9),
            link=col([r.link_gbps for r in rates], 1e9),
            nic=col([r.nic_gbps for r in rates], 1e9),
            host=col([r.host_gbps for r in rates], 1e9),
            peak=col([r.peak_tflops for r in rates], 1e12),
        )


@dataclass(frozen=True)
class Projection:
    """Per optimizer step (per serving step for inference), per GPU; arrays are (GPU, seq)."""

    seq: Array
    times: dict[str, Array]
    flops: dict[str, Array]
    bytes: dict[str, Array]
    binding: dict[str, Array]  # resource index per bucket
    compute_s: dict[str, Array]  # dense and attention: the FLOPs side of their roofline
    memory_s: dict[str, Array]  # ... and the bytes side
    step_s: Array
    tokens: Array  # tokens per GPU per step
    model_flops: Array  # per GPU per step, recompute excluded (the MFU numerator)
    peak: Array  # (GPU, 1) the recipe precision's peak FLOP/s, the MFU denominator
    pipeline_bubble: float

    @property
    def tokens_per_s(self) -> Array:
        return self.tokens / self.step_s

    def step_at_compute_scale(self, row: int, col: int, scale: Array) -> Array:
        """Step time of one point if the GPU's matmul and attention rates were `scale` x assumed."""
        fixed = self.step_s[row, col] - self.times["dense"][row, col]
        t = np.full_like(scale, fixed - self.times["attention"][row, col], dtype=float)
        for b in ("dense", "attention"):
            t += np.maximum(self.compute_s[b][row, col] / scale, self.memory_s[b][row, col])
        return t

    def resource_time(self) -> Array:
        """Seconds per resource, stacked on a leading axis in RESOURCES order."""
        out = np.zeros((len(RESOURCES), *self.step_s.shape))
        for b in BUCKETS:
            for r in range(len(RESOURCES)):
                out[r] += np.where(self.binding[b] == r, self.times[b], 0.0)
        return out


def _roofline(flops_time: Array, bytes_time: Array) -> tuple[Array, Array]:
    return np.maximum(flops_time, bytes_time), np.where(flops_time >= bytes_time, COMPUTE, MEMORY)


def _placement(degree: int, stride: int, per_node: int) -> tuple[int, int]:
    """(members per node, nodes spanned) of a parallel group whose ranks are `stride` apart."""
    g = min(degree, max(1, per_node // stride))
    return g, -(-degree // g)


def all_reduce_time(size: Array | float, n: int, stride: int, per_node: int,
                    hw: Hardware) -> Array:
    """All-reduce of `size` bytes over `n` ranks spaced `stride` apart on nodes of `per_node`."""
    g, k = _placement(n, stride, per_node)
    return _all_reduce(size, n, g, k, hw)


def _all_reduce(size: Array | float, n: int, g: int, k: int, hw: Hardware) -> Array:
    """Ring/hierarchical all-reduce time: 2(n-1)/n of the bytes, inside and across nodes.

    Across nodes, each GPU's NIC carries 2(k-1)/k of its 1/g shard while NVLink carries
    the in-node reduce-scatter and all-gather; NCCL pipelines the two, so the slower wins.
    """
    if n <= 1:
        return np.zeros_like(hw.link)
    intra = size * 2 * (g - 1) / g / hw.link
    inter = size * 2 * (k - 1) / k / g / hw.nic
    return np.maximum(intra, inter)


def _all_to_all(size: Array | float, n: int, g: int, hw: Hardware) -> Array:
    if n <= 1:
        return np.zeros_like(hw.link)
    return np.maximum(size * (g - 1) / n / hw.link, size * (n - g) / n / hw.nic)


def attention_flops_per_token(w: Workload, seq: Array) -> Array:
    """Forward attention FLOPs per token: 2 * keys * heads * (d_qk + d_v) * layers.

    Causal training and prefill see s/2 keys on average (the 6*s^2*d*h*L
    convention once multiplied by 3 for fwd+bwd); packed documents see their
    own length, so the sum over documents is sum(len_i^2), not (sum len_i)^2.
    Decode attends to the whole context.
    """
    m = w.model
    if w.mode == "decode":
        keys = seq
    else:
        span = seq if w.packed_doc_len is None else np.full_like(seq, float(w.packed_doc_len))
        keys = span / 2
    return 2.0 * keys * m.heads * (m.qk_dim + m.v_dim) * m.layers


def simulate(w: Workload, rates: Sequence[GpuRates] | Hardware, seq: Sequence[int] | Array,
             cal: Calibration = CAL) -> Projection:
    """Project one step of `w` on each GPU at each sequence length."""
    hw = rates if isinstance(rates, Hardware) else Hardware.of(rates)
    m = w.model
    s = np.asarray(seq, dtype=float).reshape(1, -1)
    mode, train, ckpt = w.mode, w.training, w.checkpointing
    decode = mode == "decode"
    lora = mode == "lora"
    tp, pp, cp, ep = w.tp, w.pp, w.cp, w.ep
    shard = tp * pp * cp
    tokens = w.micro_batch * (np.ones_like(s) if decode else s)  # per micro-batch per replica
    per_gpu = tokens / shard

    # --- dense GEMMs -----------------------------------------------------------------
    n_act = float(m.params_active)
    k_model = (4.0 if lora else 6.0) if train else 2.0
    k_dense = k_model + (2.0 if ckpt else 0.0)
    head = m.vocab * m.hidden / n_act
    dense_flops = k_dense * n_act * per_gpu
    per_flop = (1 - head) / hw.gemm + head / hw.gemm_bf16
    dense_c = dense_flops * per_flop / cal.gemm_efficiency
    experts = float(m.expert_params)
    touched: Array | float = 1.0
    if m.experts and not train:  # a small decode batch reads only the experts it routes to
        touched = 1.0 - (1.0 - m.active_experts / m.experts) ** tokens
    local = (m.params_total - experts) / (tp * pp) + experts * touched / (tp * pp * ep)
    passes = ((2.0 if lora else 3.0) + (1.0 if ckpt else 0.0)) if train else 1.0
    wbytes = 2.0 if train else WEIGHT_BYTES[w.precision]
    dense_bytes = local * wbytes * passes * np.ones_like(s)
    t_dense, b_dense = _roofline(dense_c, dense_bytes / hw.hbm)

    # --- attention ---------------------------------------------------------------------
    fwd_tok = attention_flops_per_token(w, s)
    span = s if (decode or w.packed_doc_len is None) else np.full_like(s, float(w.packed_doc_len))
    span = span if decode else span / cp
    rate = hw.attn_max * span / (span + hw.attn_s_half)
    kv_bytes = 1.0 if w.precision in ("fp8", "fp4", "nvfp4") else 2.0
    qkvo = m.heads * m.qk_dim + m.kv_heads * (m.qk_dim + m.v_dim) + m.heads * m.v_dim
    io = 2.0 * m.layers * qkvo
    if train:
        attn_flops = 3.0 * fwd_tok * per_gpu
        attn_c = attn_flops / rate * (1 + (1 / (3 * cal.attn_fwd_speedup) if ckpt else 0.0))
        attn_bytes = io * (3.5 + (1.0 if ckpt else 0.0)) * per_gpu
    else:
        attn_flops = fwd_tok * per_gpu
        attn_c = attn_flops / (rate * cal.attn_fwd_speedup)
        cache = m.kv_elems_per_token * kv_bytes / (tp * pp)
        # prefill writes the cache; decode reads all `s` cached tokens for each new one
        attn_bytes = io * per_gpu + cache * (tokens * s if decode else tokens)
    t_attn, b_attn = _roofline(attn_c, attn_bytes / hw.hbm)

    # --- elementwise (bandwidth only) ----------------------------------------------------
    passes_e = cal.elementwise_passes_fused if w.fused_kernels else cal.elementwise_passes
    if train:
        layer = passes_e * m.hidden * 2.0 * (4 / 3 if ckpt else 1.0)
        logits = (cal.logit_traffic_bytes_fused if w.fused_kernels else cal.logit_traffic_bytes)
        logits *= m.vocab / tp
        casts = 6.0 * (2 * m.hidden + m.heads * m.v_dim + m.active_ffn)
    else:
        layer = passes_e / 3 * m.hidden * 2.0
        logits = 6.0 * m.vocab / tp if decode else 0.0
        casts = 3.0 * (2 * m.hidden + m.heads * m.v_dim + m.active_ffn)
    casts = casts if w.precision in ("fp8", "fp4", "nvfp4") else 0.0
    elem_bytes = per_gpu * (layer + casts) * m.layers + tokens / cp * logits / pp
    t_elem = elem_bytes / hw.hbm

    # --- host overhead: launches per layer and pass; framework work per parameter per step ---
    passes_h = 3.0 if train else 1.0
    t_host = np.full_like(t_dense, cal.launch_s_per_layer * m.layers / pp * passes_h)

    # --- communication per micro-batch (exposed or overlappable) ----------------------------
    per_node = w.gpus_per_node
    g_tp, k_tp = _placement(tp, 1, per_node)
    k_cp = _placement(cp, tp, per_node)[1]
    g_dp, k_dp = _placement(w.dp, tp * cp, per_node)
    g_ep, _ = _placement(ep, tp * cp, per_node)
    n_tp = (4 + (2 if ckpt else 0)) if train else 2
    act = tokens / cp * m.hidden * 2.0
    t_tp = n_tp * (m.layers / pp) * _all_reduce(act, tp, g_tp, k_tp, hw)
    n_a2a = (4 + (2 if ckpt else 0)) if train else 2
    a2a = tokens / (tp * cp) * m.active_experts * m.hidden * 2.0
    t_ep = n_a2a * (m.moe_layers / pp) * _all_to_all(a2a, ep, g_ep, hw)
    cp_bw = hw.link if k_cp == 1 else hw.nic
    kv_chunk = tokens / cp * (m.kv_elems_per_token / m.layers) * 2.0
    cp_passes = (3 + (1 if ckpt else 0)) if train else 1
    t_cp_raw = (cp - 1) * kv_chunk * cp_passes * (m.layers / pp) / cp_bw
    t_cp = np.maximum(0.0, t_cp_raw - cal.comm_overlap * t_attn)
    micro = t_dense + t_attn + t_elem + t_host
    micro_comm = t_tp + t_ep + t_cp

    # --- per step ------------------------------------------------------------------------------
    acc = w.accumulation if train else 1
    stages = acc + pp - 1 if train else 1
    zeros = np.zeros_like(micro)
    t_opt, opt_bytes, b_opt = zeros, zeros, MEMORY
    dp_exposed, dp_bytes, framework = zeros, zeros, 0.0
    if train:
        params = (m.params_total - experts) / (tp * pp) + experts / (tp * pp * ep)
        shard_dp = w.dp if w.zero_stage >= 1 else 1
        weights = 2.0 * params
        grads = _all_reduce(weights, w.dp, g_dp, k_dp, hw) * (0.5 if w.zero_stage >= 2 else 1.0)
        grads = zeros + (0.0 if lora else grads)
        gather = _all_reduce(weights, w.dp, g_dp, k_dp, hw) * 0.5
        after_step = gather if w.zero_stage in (1, 2) and not lora else 0.0
        compute = t_dense + t_attn
        bwd_share = (k_dense - 2.0) / k_dense
        dp_exposed = np.maximum(0.0, grads - cal.comm_overlap * bwd_share * compute) + after_step
        if w.zero_stage == 3:
            z3 = acc * (2 + (1 if ckpt else 0)) * gather
            dp_exposed = dp_exposed + np.maximum(0.0, z3 - cal.comm_overlap * acc * compute)
        dp_bytes = zeros + 2.0 * weights * (w.dp - 1) / max(w.dp, 1)
        if not lora:
            framework = cal.host_s_per_param * params
            owned = params / shard_dp
            if w.offload_optimizer:
                t_opt = zeros + owned * 4.0 / hw.host + owned * per_node / cal.cpu_adam_params_per_s
                opt_bytes, b_opt = zeros + owned * 4.0, HOST
            else:
                opt_bytes = zeros + owned * OPT_TRAFFIC_BYTES[w.optimizer]
                t_opt = opt_bytes / hw.hbm
    per_micro = n_tp * act * (m.layers / pp) + n_a2a * a2a * (m.moe_layers / pp)
    comm_bytes = stages * per_micro + dp_bytes
    times = {
        "dense": stages * t_dense,
        "attention": stages * t_attn,
        "elementwise": stages * t_elem,
        "optimizer": t_opt + zeros,
        "communication": stages * micro_comm + dp_exposed,
        "overhead": stages * t_host + framework,
    }
    step = sum(times.values(), zeros)
    k_attn_model = 3.0 if train else 1.0
    model_flops = acc * per_gpu * (k_model * n_act + k_attn_model * fwd_tok) + zeros
    return Projection(
        seq=s.ravel(),
        times=times,
        flops={"dense": stages * dense_flops + zeros, "attention": stages * attn_flops + zeros},
        bytes={"dense": stages * dense_bytes + zeros, "attention": stages * attn_bytes + zeros,
               "elementwise": stages * elem_bytes + zeros, "optimizer": opt_bytes,
               "communication": comm_bytes + zeros},
        compute_s={"dense": stages * dense_c + zeros, "attention": stages * attn_c + zeros},
        memory_s={"dense": stages * dense_bytes / hw.hbm + zeros,
                  "attention": stages * attn_bytes / hw.hbm + zeros},
        binding={"dense": b_dense + zeros, "attention": b_attn + zeros,
                 "elementwise": np.full_like(step, MEMORY), "optimizer": np.full_like(step, b_opt),
                 "communication": np.full_like(step, NETWORK),
                 "overhead": np.full_like(step, HOST)},
        step_s=step,
        tokens=acc * per_gpu + zeros,
        model_flops=model_flops,
        peak=hw.peak,
        pipeline_bubble=(pp - 1) / stages if train else 0.0,
    )
