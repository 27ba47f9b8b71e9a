"""The one projection engine: a workload on one GPU type, for any number of layouts at once.

Training: a step is split into buckets limited by different resources, each
counted from the model's shape and the layout:

- dense: the GEMMs (2N per token per pass; backward twice the forward, LoRA only
  the input gradient), max(FLOPs / matmul rate, bytes / HBM), plus a fixed cost
  per kernel that a faster GPU does not shrink;
- attention: the flash kernel's FLOPs at its own rate for this sequence span;
- elementwise: norms, activations, residuals, RoPE, loss and low-precision casts,
  HBM traffic only, plus their per-kernel cost; a LoRA's adapters (rank-r GEMMs, HBM-bound)
  and its quantized base's dequantisation before every GEMM that reads it (`FrozenBase`);
- communication: TP/SP, CP, EP and PP traffic per micro-step and the DP/ZeRO
  gradient and parameter traffic per step, less what overlaps with compute;
- optimizer: state traffic on the GPU, or the host when offloaded;
- overhead: the framework's per-step host time and the pipeline bubble, and an offloaded
  frozen base's host-link copy where compute does not hide it.

Serving: per replica, a decode step reads the weights the batch touches and
every request's KV cache, and costs the batch's GEMM FLOPs; a request's prefill
is costed once. With continuous batching a replica of `B` requests of ISL input
and OSL output tokens makes B*OSL / (OSL*t_decode + B*t_prefill) tokens/s.

Every array is (layouts, sequence lengths) for one GPU, so a re-tune over
thousands of layouts is one numpy pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from advisor.core.model.catalog import GemmShapes
from advisor.core.model.frameworks import framework_of
from advisor.core.model.lora import adapters, frozen_linears
from advisor.core.model.workload import (
    BASE_FORMATS,
    DEQUANTISED,
    LOW_PRECISION,
    WEIGHT_BYTES,
    Workload,
)
from advisor.core.projection.calibration import CAL, OPT_STATE_BYTES, OPT_TRAFFIC_BYTES, Calibration
from advisor.core.projection.layout import Grid
from advisor.core.projection.rates import GpuRates

BUCKETS: tuple[str, ...] = (
    "dense", "attention", "elementwise", "optimizer", "communication", "overhead",
)
RESOURCES: tuple[str, ...] = ("compute", "memory", "network", "host")
COMPUTE, MEMORY, NETWORK, HOST = range(4)
GIB = float(1024**3)

Array = np.ndarray


@dataclass(frozen=True)
class Projection:
    """One GPU type under many layouts: every array is (layouts, sequence lengths)."""

    seq: Array  # (S,)
    times: dict[str, Array]  # seconds per step, per bucket
    binding: dict[str, Array]  # resource index per bucket
    compute_s: dict[str, Array]  # dense and attention: the FLOPs side of their roofline
    memory_s: dict[str, Array]  # ... and the bytes side
    flops: dict[str, Array]  # hardware FLOPs per step (recompute included)
    bytes: dict[str, Array]  # HBM / network / host bytes per step
    step_s: Array
    tokens: Array  # tokens (serving: output tokens) per GPU per step
    model_flops: Array  # per GPU per step, recompute excluded (the MFU numerator)
    peak: float  # the recipe precision's peak FLOP/s, the MFU denominator
    memory_gib: Array  # per GPU
    ttft_s: Array | None = None  # serving only
    tpot_s: Array | None = None
    # seconds per step already inside the buckets, named apart (training: "dequant", a LoRA
    # base's dequantisation in elementwise; "stream", its exposed host-link copy in overhead)
    parts: dict[str, Array] = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> Array:
        return self.tokens / self.step_s

    @property
    def mfu(self) -> Array:
        return self.model_flops / self.step_s / self.peak

    def resource_time(self) -> Array:
        """Seconds per resource, stacked on a leading axis in RESOURCES order."""
        out = np.zeros((len(RESOURCES), *self.step_s.shape))
        for b in BUCKETS:
            for r in range(len(RESOURCES)):
                out[r] += np.where(self.binding[b] == r, self.times[b], 0.0)
        return out

    def busy(self) -> Array:
        """Share of the step the GPU is computing or moving HBM data (its power draw)."""
        spent = self.resource_time()
        return (spent[COMPUTE] + spent[MEMORY]) / np.maximum(spent.sum(axis=0), 1e-30)

    def step_at_scale(self, scale: float | Array, resource: str) -> Array:
        """Step time if one resource's rates were `scale` x assumed (flips, tornado).

        A vector of scales adds a leading axis: the result is (scales, layouts, seqs).
        """
        k = np.asarray(scale, dtype=float)
        k = k.reshape(-1, 1, 1) if k.ndim else k
        t = self.step_s + 0.0 * k
        if resource in ("compute", "memory"):
            for b in ("dense", "attention"):
                c, m = self.compute_s[b], self.memory_s[b]
                fixed = self.times[b] - np.maximum(c, m)
                new = np.maximum(c / k, m) if resource == "compute" else np.maximum(c, m / k)
                t = t - self.times[b] + new + fixed
            if resource == "memory":
                t = t - self.times["elementwise"] * (1 - 1 / k)
        elif resource == "network":
            t = t - self.times["communication"] * (1 - 1 / k)
        return t

    def at(self, idx: Array) -> Projection:
        """The projection at one layout per sequence length: `idx` is (S,) layout indices."""
        cols = np.arange(self.step_s.shape[1])

        def pick(a: Array) -> Array:
            return np.broadcast_to(a, self.step_s.shape)[idx, cols].reshape(1, -1)

        def pick_d(d: dict[str, Array]) -> dict[str, Array]:
            return {k: pick(v) for k, v in d.items()}

        return Projection(
            seq=self.seq, times=pick_d(self.times), binding=pick_d(self.binding),
            compute_s=pick_d(self.compute_s), memory_s=pick_d(self.memory_s),
            flops=pick_d(self.flops), bytes=pick_d(self.bytes), step_s=pick(self.step_s),
            tokens=pick(self.tokens), model_flops=pick(self.model_flops), peak=self.peak,
            memory_gib=pick(self.memory_gib),
            ttft_s=pick(self.ttft_s) if self.ttft_s is not None else None,
            tpot_s=pick(self.tpot_s) if self.tpot_s is not None else None,
            parts=pick_d(self.parts))


def _fill(rows: Array | float, rate: float, cal: Calibration) -> Array:
    """Share of a GEMM's rate reached with `rows` rows (AIConfigurator's skinny-GEMM curves)."""
    rows = np.maximum(rows, 1e-9)
    return rows / (rows + rate * cal.gemm_m_half_s)


def _shape_factor(profile: GemmShapes | None, n: Array | float, k: Array | float) -> Array:
    """Share of the large-shape rate a GEMM `n` wide and `k` deep reaches: bilinear in log n and
    log k over the profile's grid, held at its edges (no profile: the large-shape rate)."""
    n, k = np.maximum(n, 1.0), np.maximum(k, 1.0)
    if profile is None:
        return np.ones(np.broadcast_shapes(n.shape, k.shape))
    ln, lk = np.log(np.asarray(profile.n, float)), np.log(np.asarray(profile.k, float))
    table = np.log(np.asarray(profile.of_large, float))
    x, y = np.clip(np.log(n), ln[0], ln[-1]), np.clip(np.log(k), lk[0], lk[-1])
    i = np.clip(np.searchsorted(ln, x, side="right") - 1, 0, len(ln) - 2)
    j = np.clip(np.searchsorted(lk, y, side="right") - 1, 0, len(lk) - 2)
    fx, fy = (x - ln[i]) / (ln[i + 1] - ln[i]), (y - lk[j]) / (lk[j + 1] - lk[j])
    return np.exp((1 - fx) * (1 - fy) * table[i, j] + fx * (1 - fy) * table[i + 1, j]
                  + (1 - fx) * fy * table[i, j + 1] + fx * fy * table[i + 1, j + 1])


def _layer_gemms(w: Workload, tp: Array, ep: Array) -> list[tuple[Array, Array, Array, bool]]:
    """A serving layer's GEMMs, averaged over dense and MoE layers: (FLOPs per token on one GPU,
    output width, depth, whether a routed expert). TP slices every weight; an EP of `ep` keeps
    min(ep, tp) experts whole on each slice."""
    m, sh = w.model, shape_of(w)
    h, mats, up = sh.h, sh.mlp_mats, (sh.mlp_mats - 1) / sh.mlp_mats
    attn = 2.0 * sh.n_attn / tp
    q = sh.qkv / max(sh.qkv + sh.attn_out, 1.0)
    out = [(attn * q, sh.qkv / tp, h + 0 * tp, False),
           (attn * (1 - q), h + 0 * tp, sh.attn_out / tp, False)]

    def mlp(flops: float, width: float, routed: bool, ways: Array) -> None:
        out.extend([(flops * up / tp, (mats - 1) * width / ways, h + 0 * tp, routed),
                    (flops * (1 - up) / tp, h + 0 * tp, width / ways, routed)])

    if sh.moe_share < 1:
        mlp(2.0 * (1 - sh.moe_share) * mats * h * m.ffn, float(m.ffn), False, tp)
    if sh.moe_share > 0:
        fe = float(m.expert_ffn)
        if m.shared_experts:
            mlp(2.0 * sh.moe_share * m.shared_experts * mats * h * fe,
                m.shared_experts * fe, False, tp)
        mlp(2.0 * sh.n_routed_active, fe, True, tp / np.minimum(ep, tp))
        out.append((2.0 * sh.moe_share * h * m.experts / tp, sh.experts + 0 * tp,
                    h + 0 * tp, False))
    return out


def _gemm_seconds(w: Workload, r: GpuRates, g: Grid, tokens: Array, rows: Array | float,
                  expert_rows: Array, cal: Calibration) -> Array:
    """Seconds of one layer's GEMMs for `tokens` tokens on one GPU of a serving replica, each
    at the recipe format's rate for its shape, filling `rows` rows (routed experts:
    `expert_rows`)."""
    rate = r.gemm_flops * cal.serve_gemm_efficiency
    tp, ep = g.tp.astype(float), g.ep.astype(float)
    t = 0.0 * tokens
    for flops, n, k, routed in _layer_gemms(w, tp, ep):
        fill = _fill(expert_rows if routed else rows, rate, cal)
        t = t + flops * tokens / (rate * fill * _shape_factor(r.gemm_shapes, n, k))
    return t


def _head_seconds(w: Workload, r: GpuRates, tp: Array, tokens: Array | float,
                  rows: Array | float, cal: Calibration) -> Array:
    """The LM head for `tokens` tokens: a 16-bit GEMM in every recipe (quantized checkpoints
    keep it unquantized, as the memory model reads it)."""
    sh = shape_of(w)
    rate = r.gemm16_flops * cal.serve_gemm_efficiency
    shape = _shape_factor(r.gemm16_shapes, w.model.vocab / tp, sh.h)
    return 2.0 * sh.head / tp * tokens / (rate * _fill(rows, rate, cal) * shape)


def _roofline(flops_time: Array, bytes_time: Array) -> tuple[Array, Array]:
    return np.maximum(flops_time, bytes_time), np.where(flops_time >= bytes_time, COMPUTE, MEMORY)


def _placement(degree: Array, stride: Array, per_node: Array) -> tuple[Array, Array]:
    """(members per node, nodes spanned) of groups whose ranks are `stride` apart."""
    g = np.minimum(degree, np.maximum(1, per_node // np.maximum(stride, 1)))
    return g, np.ceil(degree / g)


def _all_reduce(size: Array | float, n: Array, g: Array, k: Array, r: GpuRates,
                cal: Calibration) -> Array:
    """Ring/hierarchical all-reduce: 2(n-1)/n of the bytes over NVLink inside a node and
    2(k-1)/k of each GPU's 1/g shard over the NIC across nodes; NCCL pipelines the two,
    so the slower wins. Each call also pays a fixed latency."""
    intra = size * 2 * (g - 1) / g / r.link_bps
    inter = size * 2 * (k - 1) / k / g / r.nic_bps
    lat = np.where(k > 1, cal.nic_latency_s, cal.link_latency_s)
    return np.where(n > 1, np.maximum(intra, inter) + lat, 0.0)


def all_reduce_busbw(r: GpuRates, n: int, per_node: int, size: float,
                     cal: Calibration = CAL) -> float:
    """Bus bandwidth, B/s, of an all-reduce of `size` bytes over `n` ranks (nccl-tests'
    convention: 2(n-1)/n of the bytes over the time)."""
    ranks = np.asarray([[float(n)]])
    g, k = _placement(ranks, np.ones_like(ranks), np.asarray([[float(per_node)]]))
    t = float(_all_reduce(size, ranks, g, k, r, cal)[0, 0])
    return size * 2 * (n - 1) / n / t if t > 0 else 0.0


def _all_to_all(size: Array | float, n: Array, g: Array, r: GpuRates,
                cal: Calibration) -> Array:
    inside = size * (g - 1) / np.maximum(n, 1) / r.link_bps
    across = size * (n - g) / np.maximum(n, 1) / r.nic_bps
    lat = np.where(n > g, cal.nic_latency_s, cal.link_latency_s)
    return np.where(n > 1, np.maximum(inside, across) + lat, 0.0)


@dataclass(frozen=True)
class Shape:
    """Per-layer widths the engine needs, averaged over dense and MoE layers."""

    h: float
    qkv: float  # output width of the fused QKV projection
    attn_out: float  # heads x v_dim, the attention output projection's input
    ffn_act: float  # MLP width a token passes through (dense, or routed + shared experts)
    mlp_mats: float  # 3 gated, 2 plain
    n_attn: float  # attention params per layer
    n_mlp_active: float  # active MLP params per layer (dense or routed + shared + router)
    n_expert_layer: float  # routed-expert params of one MoE layer
    n_routed_active: float  # routed-expert params a token passes through, per layer (averaged)
    moe_share: float  # MoE layers / layers
    head: float  # vocab x hidden
    experts: float
    top_k: float


def shape_of(w: Workload) -> Shape:
    m = w.model
    qkv = m.heads * m.qk_dim + m.kv_heads * (m.qk_dim + m.v_dim)
    mats = 3.0 if m.gated_mlp else 2.0
    dense_mlp = mats * m.hidden * m.ffn
    moe_active = (m.active_experts + m.shared_experts) * mats * m.hidden * m.expert_ffn \
        + m.hidden * m.experts
    share = m.moe_layers / m.layers
    return Shape(
        h=float(m.hidden), qkv=float(qkv), attn_out=float(m.heads * m.v_dim),
        ffn_act=float(m.active_ffn), mlp_mats=mats, n_attn=float(m.attn_params_per_layer),
        n_mlp_active=(1 - share) * dense_mlp + share * moe_active,
        n_expert_layer=float(m.experts * mats * m.hidden * m.expert_ffn),
        n_routed_active=share * m.active_experts * mats * m.hidden * m.expert_ffn,
        moe_share=share, head=float(m.vocab * m.hidden), experts=float(max(m.experts, 1)),
        top_k=float(m.active_experts),
    )


def local_params(w: Workload, g: Grid) -> Array:
    """Weights on the busiest pipeline stage of one GPU: its layers' share and one embedding.

    Routed experts: training shards them over EP groups across data-parallel ranks, so a
    GPU holds 1/(TP x EP) of a stage's experts; a serving replica splits them over its own
    TP x PP GPUs, EP only choosing whole experts over slices of each, or, with data-parallel
    attention (EP wider than TP), over the EP GPUs its attention replicas share."""
    m = w.model
    experts = float(m.expert_params)
    embed = float(m.vocab * m.hidden)
    body = float(m.params_total) - experts - embed * (1 if m.tie_embeddings else 2)
    expert_ways = g.pp * g.tp * g.ep if w.training else g.pp * np.maximum(g.tp, g.ep)
    return ((body / g.pp + embed) / g.tp + experts / expert_ways).astype(float)


def attention_replicas(g: Grid) -> Array:
    """Serving replicas whose attention runs apart while their MoE layers share one EP group
    (data-parallel attention, as SGLang and TensorRT-LLM serve DeepSeek): 1 unless EP > TP x PP."""
    return np.maximum(1.0, g.ep / (g.tp * g.pp))


def attention_flops_per_token(w: Workload, keys: Array) -> Array:
    """Forward attention FLOPs per token attending to `keys` keys: 2 x keys x heads x
    (d_qk + d_v) x layers (the 6*s^2*d*h*L convention once causal and x3 for training)."""
    m = w.model
    return 2.0 * keys * m.heads * (m.qk_dim + m.v_dim) * m.layers


def _keys(w: Workload, s: Array) -> Array:
    """Mean keys a query attends to: half the sequence when causal (a sliding layer at most its
    window), its document when packed."""
    span = s if w.packed_doc_len is None else np.full_like(s, float(w.packed_doc_len))
    return np.asarray(w.model.mean_keys(span))


def _attn_rate(peak: float, s_half: float, span: Array) -> Array:
    return peak * span / (span + s_half)


def _framework_name(w: Workload) -> str:
    """The framework a workload runs on, by the one rule (a resolved side has it already)."""
    return framework_of(w.framework, w.training, w.zero_stage)[0]


def _framework(w: Workload, cal: Calibration) -> tuple[float, float, float]:
    """(fixed s per step, s per local parameter per step, host s per kernel launch)."""
    f = _framework_name(w)
    return cal.step_fixed_s[f], cal.host_s_per_param[f], cal.launch_s[f]


def usable_gib(capacity_gib: float, cal: Calibration = CAL) -> float:
    """Labelled capacity less what the driver, context and allocator keep."""
    return capacity_gib * cal.usable_memory_fraction


@dataclass(frozen=True)
class FrozenBase:
    """A LoRA's frozen base and its adapters on one GPU of each layout, arrays (L, 1).

    The base's linear layers are held in the layout's format (embeddings and the LM head stay
    16-bit), on the GPU or, offloaded, on the host with two layers on the GPU (the one
    computing and the one prefetched). A dequantised format (int8, NF4, int4) is turned back
    into a 16-bit copy before every GEMM that reads it, forward and backward alike, as
    bitsandbytes' MatMul4Bit does: that copy is what the GEMMs read, and one is alive at a
    time. The adapters are what trains.
    """

    trained: Array  # adapter weights on this GPU
    stored: Array  # bytes per frozen linear weight as held
    reads: Array  # bytes per frozen linear weight the GEMMs read
    dequant: Array  # 1: dequantised to 16 bits before each GEMM
    offload: Array  # 1: held on the host
    body: Array  # frozen linear weights on this GPU (its layers, its TP/EP share)
    layers: Array  # layers on this GPU (its pipeline stage)
    head: Array  # LM-head (and embedding) weights per table on this GPU
    tables: Array  # embedding tables on this GPU: the LM head, and the input one at PP 1
    largest: Array  # weights of its largest linear layer on this GPU

    @property
    def gpu_bytes(self) -> Array:
        """Bytes of the frozen base the GPU holds, before ZeRO-3 shards it."""
        held = self.body * self.stored + self.tables * self.head * 2.0
        prefetched = 2.0 * np.maximum(self.body / self.layers * self.stored, self.head * 2.0)
        return np.where(self.offload == 1, prefetched, held)

    @property
    def transient_bytes(self) -> Array:
        """The one 16-bit copy a dequantised base holds while its GEMM runs."""
        return np.where(self.dequant == 1, self.largest * 2.0, 0.0)


def frozen_base(w: Workload, g: Grid, cal: Calibration = CAL) -> FrozenBase:
    """The frozen base and adapters of a LoRA `w` in each layout of `g`."""
    m = w.model
    low = w.precision in LOW_PRECISION
    tp, pp, ep = (a.astype(float) for a in (g.tp, g.pp, g.ep))
    # a low-precision recipe keeps the 16-bit base and its FP8 copy, which the GEMMs read; an
    # FP8 base is read as it is; the rest are dequantised to 16 bits first
    stored = {"bf16": 2.0 + (1.0 if low else 0.0), "fp8": cal.base_bytes["fp8"],
              "int8": cal.base_bytes["int8"], "int4": cal.base_bytes["int4"],
              "nf4": cal.base_bytes["nf4-double-quant" if w.double_quant else "nf4"]}
    fmt = list(BASE_FORMATS)
    col = g.base.astype(int)
    dequant = np.asarray([f in DEQUANTISED or (f == "fp8" and not low) for f in fmt])[col]
    reads = np.where(dequant, 2.0, 1.0 if low else 2.0)
    head = float(m.vocab * m.hidden) / tp  # local_params counts one table per stage
    a = adapters(m, w.lora_rank, w.lora_targets)
    _, _, largest = frozen_linears(m)
    return FrozenBase(
        trained=(a.trainable - a.trainable_routed) / (tp * pp) + a.trainable_routed / (
            tp * pp * ep),
        stored=np.asarray([stored[f] for f in fmt])[col], reads=reads,
        dequant=dequant.astype(int), offload=g.frozen_offload.astype(int),
        body=local_params(w, g) - head, layers=np.ceil(m.layers / pp), head=head,
        tables=np.where((g.pp == 1) & (not m.tie_embeddings), 2.0, 1.0),
        largest=largest / tp)


def memory_training(w: Workload, g: Grid, s: Array, cal: Calibration = CAL) -> Array:
    """GiB one GPU holds, (L, S): weights, grads, optimizer state, activations, logits. A paged
    optimizer's state is not in it: it lives in host-backed memory and pages in for the
    update (see `paged_state_gib`)."""
    return _memory_training(w, g, s, cal)[0]


def _memory_training(w: Workload, g: Grid, s: Array, cal: Calibration) -> tuple[Array, Array]:
    """(GiB one GPU holds, GiB of a paged optimizer's state kept out of it)."""
    m, sh = w.model, shape_of(w)
    lora = w.mode == "lora"
    low = w.precision in LOW_PRECISION
    shard = (g.dp * g.cp).astype(float)
    z3 = np.where(g.zero == 3, shard, 1.0)
    if lora:  # the adapters train; the frozen base is held as the layout says
        base = frozen_base(w, g, cal)
        trained = base.trained
        weights = (trained * 2.0 + base.gpu_bytes) / z3 + base.transient_bytes
    else:
        trained = local_params(w, g)
        weights = trained * (2.0 + (1.0 if low else 0.0)) / z3
    grads = cal.grad_bytes[_framework_name(w)] * trained / np.where(g.zero >= 2, shard, 1.0)
    state = np.where(g.offload == 1, 0.0, OPT_STATE_BYTES[w.optimizer] * trained
                     / np.where(g.zero >= 1, shard, 1.0))
    paged = w.optimizer.startswith("paged_")
    optimizer = 0.0 if paged else state
    saved, selective_saved, transient = _layer_widths(w)
    layers = np.ceil(m.layers / g.pp)
    per_layer = np.where(g.recompute == 2, 0.0,
                         np.where(g.recompute == 1, selective_saved, saved)) * 2.0
    full_inputs = np.where(g.recompute == 2, sh.h * 2.0, 0.0)
    inflight = np.where(g.pp > 1, np.minimum(g.pp * (1 + (g.pp - 1) / (g.pp * g.vp)), g.acc + 0.0),
                        1.0)
    tok = g.mb * s / (g.cp * g.tp)  # activations are sharded by TP (sequence parallel) and CP
    kept = tok * layers * inflight * (per_layer + full_inputs)
    acts = kept + tok * np.where(g.recompute == 2, (saved + transient) * 2.0, transient * 2.0)
    logits = np.where(g.fused == 1, cal.logit_memory_bytes_fused, cal.logit_memory_bytes) * (
        m.vocab / g.tp * tok)
    states = weights + grads + optimizer
    # The peak is the larger of two phases. The end of the forward pass holds every kept
    # activation and the framework's buffers (parameter gathers, buckets, the loss); under
    # full recompute, backward frees some of those buffers but re-materialises one layer.
    # A LoRA's frozen base has neither gathers of trained weights nor their buckets.
    floors = (cal.lora_floor_gib, cal.lora_floor_gib) if lora else (
        cal.framework_floor_gib, cal.recompute_floor_gib)
    forward = (states + np.where(g.recompute == 2, kept * cal.checkpoint_forward_factor,
                                 acts + logits)) / GIB + floors[0]
    backward = (states + acts + logits) / GIB + floors[1]
    peak = np.where(g.recompute == 2, np.maximum(forward, backward), forward)
    return peak, (state if paged else 0.0 * state) / GIB + 0.0 * peak


def _layer_widths(w: Workload) -> tuple[float, float, float]:
    """(elements saved per token per layer, with selective recompute, one layer's transient
    gradients), after Korthikanti et al. adapted to SwiGLU and GQA, flash attention."""
    m = w.model
    h, f = m.hidden, m.active_ffn
    attn = m.heads * m.qk_dim + m.kv_heads * (m.qk_dim + m.v_dim) + m.heads * m.v_dim
    if m.mla:
        attn += m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim
    mlp = (3 if m.gated_mlp else 2) * f  # gate, up, product (or fc1 out, activation)
    saved = 4 * h + attn + mlp
    if not w.fused_kernels:
        saved += 4 * h + (f if m.gated_mlp else 0) + (m.heads + m.kv_heads) * m.qk_dim
    # selective: the norm outputs and the activation's input are recomputed from kept inputs
    selective = 2 * h + attn + (2 * f if m.gated_mlp else f)
    transient = (2 if m.gated_mlp else 1) * f + h
    return float(saved), float(selective), float(transient)


def train(w: Workload, r: GpuRates, g: Grid, seq: Array, cal: Calibration = CAL) -> Projection:
    """One optimizer step of `w` on one GPU type for every layout in `g` at every length."""
    m, sh = w.model, shape_of(w)
    s = np.asarray(seq, dtype=float).reshape(1, -1)
    lora = w.mode == "lora"
    low = w.precision in LOW_PRECISION
    tp, pp, cp, ep, vp = (a.astype(float) for a in (g.tp, g.pp, g.cp, g.ep, g.vp))
    dp, acc, mb = g.dp.astype(float), g.acc.astype(float), g.mb.astype(float)
    full, sel = (g.recompute == 2), (g.recompute == 1)
    layers = np.ceil(m.layers / pp)
    tok = mb * s / cp  # tokens each CP rank handles per micro-step
    zeros = np.zeros(np.broadcast_shapes(tok.shape, (len(g), s.shape[1])))
    base = frozen_base(w, g, cal) if lora else None

    # --- dense GEMMs --------------------------------------------------------------------
    grad_passes = 1.0 if lora else 2.0  # LoRA: input gradients only; frozen weights
    passes = 1.0 + grad_passes + np.where(full, 1.0, 0.0)
    body_fwd = 2.0 * (sh.n_attn + sh.n_mlp_active) * tok / tp * layers
    head_fwd = 2.0 * sh.head * tok / tp  # on the last stage
    head_passes = 1.0 + grad_passes
    dense_flops = passes * body_fwd + head_passes * head_fwd
    eff = cal.gemm_efficiency[_framework_name(w)]
    rate = r.gemm_flops * eff
    rate16 = r.gemm16_flops * eff
    # Rows per GEMM call: few rows leave SMs empty. A routed expert sees only the tokens sent
    # to it: k/E of the EP group's tokens.
    routed_fwd = 2.0 * sh.n_routed_active * tok / tp * layers
    rows_e = tok * ep * sh.top_k / sh.experts
    dense_c = (passes * (body_fwd - routed_fwd) / (rate * _fill(tok, rate, cal))
               + passes * routed_fwd / (rate * _fill(rows_e, rate, cal))
               + head_passes * head_fwd / (rate16 * _fill(tok, rate16, cal)))
    wbytes = base.reads if base is not None else (1.0 if low else 2.0)
    expert_local = sh.n_expert_layer * sh.moe_share / (tp * ep)
    layer_w = (sh.n_attn + (1 - sh.moe_share) * sh.n_mlp_active) / tp + expert_local
    io = 2.0 * tok * (4 * sh.h + (sh.qkv + sh.attn_out + (sh.mlp_mats) * sh.ffn_act) / tp)
    dense_bytes = passes * layers * (layer_w * wbytes + io) + head_passes * sh.head / tp * 2.0
    gemm_calls = passes * layers * (4.0 + 3.0 * sh.moe_share) * (1 + grad_passes) / 2
    t_dense, b_dense = _roofline(dense_c, dense_bytes / r.hbm_bps)
    t_dense = t_dense + gemm_calls * cal.kernel_s

    # --- attention ----------------------------------------------------------------------
    keys = _keys(w, s)
    attn_fwd = 2.0 * keys * m.heads / tp * (m.qk_dim + m.v_dim) * tok * layers
    span = (s if w.packed_doc_len is None else np.full_like(s, float(w.packed_doc_len))) / cp
    r_fb = _attn_rate(r.attn_fb_flops, r.attn_s_half, span)
    r_f = _attn_rate(r.attn_f_flops, r.attn_s_half, span)
    attn_c = cal.attn_fwd_bwd_flops * attn_fwd / r_fb + np.where(full, attn_fwd / r_f, 0.0)
    attn_flops = 3.0 * attn_fwd + np.where(full, attn_fwd, 0.0)
    attn_bytes = 2.0 * tok * (sh.qkv + sh.attn_out) / tp * layers * (
        cal.attn_fwd_bwd_flops + np.where(full, 1, 0))
    t_attn, b_attn = _roofline(attn_c, attn_bytes / r.hbm_bps)
    t_attn = t_attn + layers * (3.0 + np.where(full, 1.0, 0.0)) * cal.kernel_s

    # --- elementwise --------------------------------------------------------------------
    fused = g.fused == 1
    per_token_layer = (cal.elementwise_h_tensors * sh.h + 2 * (m.heads + m.kv_heads) * m.qk_dim
                       + (3 if m.gated_mlp else 2) * sh.ffn_act) * 2.0 / tp
    fusion = np.where(fused | (_framework_name(w) == "megatron"), cal.fused_traffic, 1.0)
    elem_passes = 3.0 + np.where(full, 1.0, 0.0) + np.where(sel, 0.5, 0.0)
    elem = tok * per_token_layer * layers * elem_passes * fusion
    logits = np.where(fused, cal.logit_traffic_bytes_fused, cal.logit_traffic_bytes)
    elem = elem + tok * logits * m.vocab / tp
    # MoE dispatch: permute, scatter and gather each routed copy of a token, fwd and bwd
    elem = elem + (tok / tp * sh.top_k * sh.h * 2.0 * cal.moe_dispatch_passes * elem_passes
                   * m.moe_layers / pp)
    if low:
        casts = cal.cast_bytes * (4 * sh.h + sh.attn_out + sh.ffn_act + sh.qkv
                                  + 2 * sh.mlp_mats / 3 * sh.ffn_act) / tp
        elem = elem + tok * casts * layers
    kernels = cal.elementwise_kernels_per_layer
    elem_calls = layers * np.where(fused, kernels["fused"], kernels["eager"]) * elem_passes / 3.0
    t_dequant = zeros
    if base is not None:
        # LoRA's adapters: two rank-r GEMMs per adapted layer per pass (forward, input and
        # weight gradients, recompute), r FLOPs per byte, so HBM-bound on every GPU: counted as
        # the traffic of each adapted layer's input and output, with their launches
        a = adapters(m, w.lora_rank, w.lora_targets)
        adapter_passes = 3.0 + np.where(full, 1.0, 0.0)
        elem = elem + tok * 2.0 * a.width / tp * layers * adapter_passes
        elem_calls = elem_calls + layers * a.modules * 2.0 * adapter_passes
        # a dequantised base: every GEMM that reads a frozen weight (forward, input gradient,
        # recompute) first reads it as held and writes its 16-bit copy, one kernel per layer
        n_linears, n_routed, _ = frozen_linears(m)
        kernels_dq = passes * layers * (n_linears - n_routed + n_routed / ep)
        dq_bytes = passes * layers * layer_w * (base.stored + 2.0)
        t_dequant = np.where(base.dequant == 1, dq_bytes / r.hbm_bps + kernels_dq * cal.kernel_s,
                             0.0) + zeros
        elem = elem + np.where(base.dequant == 1, dq_bytes, 0.0)
        elem_calls = elem_calls + np.where(base.dequant == 1, kernels_dq, 0.0)
    t_elem = elem / r.hbm_bps + elem_calls * cal.kernel_s

    # --- communication per micro-step ---------------------------------------------------
    per_node = g.per_node.astype(float)
    g_tp, k_tp = _placement(tp, np.ones_like(tp), per_node)
    act = tok * sh.h * 2.0
    n_tp = 2.0 * (1.0 + grad_passes + np.where(full, 1.0, 0.0))
    t_tp = n_tp * layers * _all_reduce(act, tp, g_tp, k_tp, r, cal)
    t_tp = np.maximum(0.0, t_tp - cal.tp_overlap * np.minimum(t_tp, t_dense))
    g_ep, _ = _placement(ep, tp * cp, per_node)
    a2a = tok / tp * m.active_experts * sh.h * 2.0
    n_a2a = 2.0 * (1.0 + grad_passes + np.where(full, 1.0, 0.0))
    t_ep = n_a2a * (m.moe_layers / pp) * _all_to_all(a2a, ep, g_ep, r, cal)
    t_ep = np.maximum(0.0, t_ep - cal.ep_overlap * t_dense)
    cp_inside = tp * cp <= per_node
    cp_bw = np.where(cp_inside, r.link_bps, r.nic_bps)
    kv_chunk = tok * (m.kv_elems_per_token_at(s) / m.layers) * 2.0
    t_cp = (cp - 1) * kv_chunk * (3.0 + np.where(full, 1.0, 0.0)) * layers / cp_bw
    t_cp = np.maximum(0.0, t_cp - cal.comm_overlap * t_attn)
    t_pp = np.where(pp > 1, 2.0 * vp * act / tp / np.where(tp * pp <= per_node, r.link_bps,
                                                             r.nic_bps), 0.0)
    launches = gemm_calls + elem_calls + layers * 4.0
    fixed_s, per_param_s, launch_s = _framework(w, cal)
    gpu_micro = t_dense + t_attn + t_elem
    host_floor = launches * launch_s
    micro = np.maximum(gpu_micro, host_floor)
    micro_comm = t_tp + t_ep + t_cp + t_pp

    # --- per step -----------------------------------------------------------------------
    stages = acc + (pp - 1) / vp
    # what trains: every weight, or a LoRA's adapters (its frozen base is gathered under
    # ZeRO-3 in the 16 bits or fewer it is held in, and needs no gradient)
    trained = base.trained if base is not None else local_params(w, g)
    frozen_gathered = 0.0 if base is None else np.where(
        base.offload == 1, 0.0,
        base.body * np.minimum(base.stored, 2.0) + base.tables * base.head * 2.0)
    shard = dp * cp
    g_dp, k_dp = _placement(shard, tp, per_node)
    grad_size = cal.grad_bytes[_framework_name(w)] * trained
    grads = _all_reduce(grad_size, shard, g_dp, k_dp, r, cal)
    grads = grads * np.where(g.zero >= 2, 0.5, 1.0)
    gather = _all_reduce(2.0 * trained, shard, g_dp, k_dp, r, cal) * 0.5
    gather3 = _all_reduce(2.0 * trained + frozen_gathered, shard, g_dp, k_dp, r, cal) * 0.5
    bwd_window = (t_dense + t_attn) * (grad_passes / (1.0 + grad_passes))
    dp_exposed = np.maximum(0.0, grads - cal.comm_overlap * bwd_window)
    after = np.where((g.zero >= 1) & (g.zero <= 2), gather, 0.0)
    after = np.maximum(0.0, after - cal.comm_overlap * (t_dense + t_attn) / (1 + grad_passes))
    z3 = acc * (2.0 + np.where(full, 1.0, 0.0)) * gather3
    z3_exposed = np.where(g.zero == 3, np.maximum(0.0, z3 - cal.comm_overlap * acc * gpu_micro),
                          0.0)
    comm_step = dp_exposed + after + z3_exposed
    # an offloaded frozen base crosses the host link every pass, prefetched behind compute
    t_stream = zeros
    if base is not None:
        streamed = (passes * layers * layer_w * np.minimum(base.stored, 2.0)
                    + head_passes * sh.head / tp * 2.0)
        t_stream = np.where(base.offload == 1, np.maximum(
            0.0, streamed / r.host_bps - cal.frozen_stream_overlap * gpu_micro), 0.0) + zeros
    owned = trained / np.where(g.zero >= 1, shard, 1.0)
    gpu_opt = owned * OPT_TRAFFIC_BYTES[w.optimizer] / r.hbm_bps
    host_opt = owned * 4.0 / r.host_bps + owned * per_node / cal.cpu_adam_params_per_s
    memory, paged = _memory_training(w, g, s, cal)
    # a paged optimizer's state stays on the GPU while it fits beside the rest; where it does
    # not, it pages out during forward and backward and back in for the update
    spill = (paged > 0) & (memory + paged > usable_gib(r.capacity_gib, cal))
    t_page = np.where(spill, 2.0 * paged * GIB / r.host_bps, 0.0)
    t_opt = np.where(g.offload == 1, host_opt, gpu_opt) + t_page + zeros
    opt_bytes = owned * np.where(g.offload == 1, 4.0, OPT_TRAFFIC_BYTES[w.optimizer]) + zeros
    framework = fixed_s + per_param_s * trained
    times = {
        "dense": stages * t_dense + zeros,
        "attention": stages * t_attn + zeros,
        "elementwise": stages * t_elem + zeros,
        "optimizer": t_opt,
        "communication": stages * micro_comm + comm_step + zeros,
        "overhead": stages * (micro - gpu_micro + t_stream) + framework + zeros,
    }
    step = sum(times.values(), zeros)
    k_model = cal.lora_flops_per_param if lora else cal.train_flops_per_param
    tokens = acc * mb * s / (tp * pp * cp) + zeros  # per GPU per step
    n_act = float(m.params_active)
    # the adapters' own FLOPs: forward, input and weight gradients, as the trained weights'
    adapter_flops = (cal.train_flops_per_param * adapters(m, w.lora_rank, w.lora_targets).active
                     if lora else 0.0)
    model_flops = tokens * (k_model * n_act + adapter_flops
                            + 3.0 * attention_flops_per_token(w, keys))
    return Projection(
        seq=s.ravel(), times=times,
        binding={"dense": b_dense + zeros, "attention": b_attn + zeros,
                 "elementwise": np.full_like(step, MEMORY),
                 "optimizer": np.where((g.offload == 1) | spill, HOST, MEMORY) + zeros,
                 "communication": np.full_like(step, NETWORK),
                 "overhead": np.full_like(step, HOST)},
        compute_s={"dense": stages * dense_c + zeros, "attention": stages * attn_c + zeros},
        memory_s={"dense": stages * dense_bytes / r.hbm_bps + zeros,
                  "attention": stages * attn_bytes / r.hbm_bps + zeros},
        flops={"dense": stages * dense_flops + zeros, "attention": stages * attn_flops + zeros},
        bytes={"dense": stages * dense_bytes + zeros, "attention": stages * attn_bytes + zeros,
               "elementwise": stages * elem + zeros, "optimizer": opt_bytes,
               "communication": stages * (n_tp * layers * act + n_a2a * a2a * m.moe_layers / pp)
               + 2.0 * grad_size + zeros},
        step_s=step, tokens=tokens, model_flops=model_flops, peak=r.peak_flops,
        memory_gib=memory + zeros,
        parts={"dequant": stages * t_dequant + zeros, "stream": stages * t_stream + zeros},
    )


# --- serving ---------------------------------------------------------------------------------


def _decode_step(w: Workload, r: GpuRates, g: Grid, ctx: Array, batch: Array,
                 cal: Calibration) -> dict[str, Array]:
    """Seconds of one decode step of a replica (per pipeline stage) by bucket, plus bytes."""
    m, sh = w.model, shape_of(w)
    tp, pp = g.tp.astype(float), g.pp.astype(float)
    layers = np.ceil(m.layers / pp)
    wb = WEIGHT_BYTES[w.precision]
    flops = 2.0 * (sh.n_attn + sh.n_mlp_active) * batch / tp * layers + 2.0 * sh.head * batch / tp
    # the MoE layers see every attention replica's tokens of their EP group
    moe_tokens = batch * attention_replicas(g)
    experts_touched = np.where(m.experts > 0,
                               1.0 - (1.0 - m.active_experts / max(m.experts, 1)) ** moe_tokens,
                               0.0)
    weights = ((sh.n_attn + (1 - sh.moe_share) * sh.n_mlp_active) / tp * layers
               + sh.n_expert_layer * sh.moe_share * experts_touched / np.maximum(tp, g.ep)
               * layers) * wb
    weights = weights + sh.head / tp * 2.0
    io = 2.0 * batch * (4 * sh.h + (sh.qkv + sh.attn_out + sh.mlp_mats * sh.ffn_act) / tp) * layers
    touched = np.maximum(experts_touched * sh.experts, 1.0)
    rows_e = moe_tokens * sh.top_k / touched
    dense_c = (layers * _gemm_seconds(w, r, g, batch, batch, rows_e, cal)
               + _head_seconds(w, r, tp, batch, batch, cal))
    dense_m = (weights + io) / r.hbm_bps
    t_dense = np.maximum(dense_c, dense_m) + layers * 4.0 * cal.kernel_s
    kv_local = _kv_per_token_gpu(w, g)
    cached = m.cached_tokens(ctx)  # a sliding layer keeps, and attends to, its window only
    kv = batch * cached * kv_local
    attn_flops = 2.0 * cached * m.heads / tp * (m.qk_dim + m.v_dim) * batch * layers
    attn_c = attn_flops / (r.attn_f_flops * cal.decode_attn_compute)
    attn_m = kv / (r.hbm_bps * cal.decode_attn_bw)
    t_attn = np.maximum(attn_c, attn_m) + layers * cal.kernel_s
    elem = (batch * (cal.elementwise_h_tensors * sh.h * 2.0) * layers
            + batch * m.vocab / tp * cal.decode_logit_bytes)
    t_elem = elem / r.hbm_bps + layers * cal.decode_kernels_per_layer * cal.kernel_s
    act = batch * sh.h * 2.0
    per_node = g.per_node.astype(float)
    g_tp, k_tp = _placement(tp, np.ones_like(tp), per_node)
    t_comm = 2.0 * layers * _all_reduce(act, tp, g_tp, k_tp, r, cal)
    t_comm = t_comm + _dispatch(w, g, act / tp, layers, r, cal)
    t_comm = t_comm + np.where(pp > 1, act / r.link_bps + cal.link_latency_s, 0.0)
    return {"dense": t_dense, "attention": t_attn, "elementwise": t_elem,
            "communication": t_comm,
            "overhead": cal.serve_step_s + batch * cal.serve_request_s + 0.0 * t_dense,
            "_dense_c": dense_c, "_dense_m": dense_m, "_attn_c": attn_c, "_attn_m": attn_m,
            "_flops": flops, "_attn_flops": attn_flops, "_wbytes": weights + io, "_kv": kv,
            "_elem": elem}


def _prefill(w: Workload, r: GpuRates, g: Grid, isl: Array, cal: Calibration
             ) -> dict[str, Array]:
    """Seconds to prefill one request of `isl` tokens on a replica (all stages), by bucket."""
    m, sh = w.model, shape_of(w)
    tp = g.tp.astype(float)
    flops = 2.0 * (sh.n_attn + sh.n_mlp_active) * isl / tp * m.layers + 2.0 * sh.head / tp
    rows = cal.serve_max_tokens  # chunked prefill batches prompts up to the token budget
    rows_e = rows * attention_replicas(g) * sh.top_k / sh.experts
    t_dense = (m.layers * _gemm_seconds(w, r, g, isl + 0 * tp, rows, rows_e, cal)
               + _head_seconds(w, r, tp, 1.0, rows, cal))
    keys = np.asarray(m.mean_keys(isl))  # half the prompt; a sliding layer at most its window
    attn_fwd = 2.0 * keys * m.heads / tp * (m.qk_dim + m.v_dim) * isl * m.layers
    t_attn = attn_fwd / _attn_rate(r.attn_f_flops, r.attn_s_half, isl) + m.layers * cal.kernel_s
    elem = isl * (cal.elementwise_h_tensors * sh.h + (3 if m.gated_mlp else 2) * sh.ffn_act) * (
        2.0 / tp * m.layers)
    t_elem = elem / r.hbm_bps
    act = isl * sh.h * 2.0
    per_node = g.per_node.astype(float)
    g_tp, k_tp = _placement(tp, np.ones_like(tp), per_node)
    t_comm = 2.0 * m.layers * _all_reduce(act, tp, g_tp, k_tp, r, cal)
    t_comm = t_comm + _dispatch(w, g, act / tp, m.layers + 0.0 * tp, r, cal)
    t_comm = np.maximum(0.0, t_comm - cal.serve_tp_overlap * t_dense)
    return {"dense": t_dense, "attention": t_attn, "elementwise": t_elem,
            "communication": t_comm, "_flops": flops, "_attn_flops": attn_fwd}


def _dispatch(w: Workload, g: Grid, act: Array, layers: Array, r: GpuRates,
              cal: Calibration) -> Array:
    """Data-parallel attention: each MoE layer sends a GPU's tokens to their experts on the EP
    group and back (two all-to-alls of top-k copies), where TP alone would all-reduce."""
    ep = g.ep.astype(float)
    wide = ep > g.tp * g.pp
    if not w.model.experts or not np.any(wide):
        return 0.0 * act
    g_ep, _ = _placement(ep, np.ones_like(ep), g.per_node.astype(float))
    moe_layers = w.model.moe_layers * layers / w.model.layers
    a2a = 2.0 * moe_layers * _all_to_all(act * w.model.active_experts, ep, g_ep, r, cal)
    return np.where(wide, a2a, 0.0)


def _kv_per_token_gpu(w: Workload, g: Grid) -> Array:
    """KV-cache bytes per cached token on one GPU: its layers, its share of the KV heads."""
    m = w.model
    tp, pp = g.tp.astype(float), g.pp.astype(float)
    layers = np.ceil(m.layers / pp)
    if m.mla:  # the latent is replicated across TP ranks
        per_layer = float(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) + 0 * tp
    else:
        heads = np.maximum(m.kv_heads / tp, 1.0)
        per_layer = 2.0 * heads * m.d_head
    return per_layer * layers * w.kv_bytes


def memory_serving(w: Workload, g: Grid, ctx: Array, cal: Calibration = CAL) -> Array:
    """GiB one GPU holds while serving: weights, KV of every request in flight, workspace."""
    m = w.model
    local = local_params(w, g)
    weights = local * WEIGHT_BYTES[w.precision]
    overhead = cal.kv_overhead.get(_framework_name(w), cal.kv_overhead["trtllm"])
    kv = g.mb * w.model.cached_tokens(ctx) * _kv_per_token_gpu(w, g) * overhead
    ws = cal.serve_workspace_bytes
    workspace = cal.serve_max_tokens * (m.hidden * ws["hidden"] + m.active_ffn * ws["ffn"] / g.tp)
    return (weights + kv + workspace) / GIB + cal.inference_floor_gib


def serve(w: Workload, r: GpuRates, g: Grid, seq: Array, cal: Calibration = CAL) -> Projection:
    """Serving throughput per GPU for every layout: decode, prefill, or both (continuous
    batching of requests with `seq` input tokens and `w.osl` output tokens)."""
    m = w.model
    s = np.asarray(seq, dtype=float).reshape(1, -1)
    batch = g.mb.astype(float)
    tp, pp = g.tp.astype(float), g.pp.astype(float)
    replica = tp * pp
    zeros = np.zeros((len(g), s.shape[1]))
    n_act = float(m.params_active)
    if w.mode == "prefill":
        pre = _prefill(w, r, g, s, cal)
        t = {k: batch * v + zeros for k, v in pre.items() if not k.startswith("_")}
        t["optimizer"], t["overhead"] = zeros, zeros + cal.serve_step_s
        step = sum(t.values(), zeros)
        tokens = batch * s / replica + zeros
        # the LM head runs once per request, on its last token
        head = 2.0 * float(m.vocab * m.hidden)
        model_flops = tokens * (2 * n_act - head + attention_flops_per_token(w, _keys(w, s))) \
            + tokens / s * head
        mem = memory_serving(w, g, s, cal) + zeros
        return _serving_projection(s, t, step, tokens, model_flops, r.peak_flops, mem,
                                   step + zeros, step / np.maximum(tokens, 1e-9) + zeros,
                                   pre["dense"] * batch + zeros, zeros, pre["_flops"] * batch,
                                   pre["_attn_flops"] * batch, zeros, zeros, zeros)
    decode_only = w.mode == "decode"
    osl = float(w.osl or 1)
    ctx = s if decode_only else s + osl / 2
    per_stage = np.maximum(1.0, batch / pp)
    dec = _decode_step(w, r, g, ctx, per_stage, cal)
    round_s = pp * sum(dec[k] for k in ("dense", "attention", "elementwise", "communication",
                                         "overhead"))
    # one "step": every request in flight advances by one token, and carries its share of the
    # prefills (decode alone carries none)
    pre = {k: zeros for k in ("dense", "attention", "elementwise", "communication")} \
        if decode_only else _prefill(w, r, g, s, cal)
    pre_s = sum((pre[k] for k in ("dense", "attention", "elementwise", "communication")), zeros)
    share = 0.0 if decode_only else batch / osl
    t = {k: pp * dec[k] + share * pre[k] + zeros
         for k in ("dense", "attention", "elementwise", "communication")}
    t["optimizer"] = zeros
    t["overhead"] = pp * dec["overhead"] + zeros
    step = sum(t.values(), zeros)
    tokens = batch / replica + zeros
    model_flops = tokens * (2 * n_act + attention_flops_per_token(w, m.cached_tokens(ctx)))
    mem_ctx = s if decode_only else s + osl / 2  # paged KV: requests hold their tokens so far
    mem = memory_serving(w, g, mem_ctx, cal) + zeros
    dispatch = cal.prefill_dispatch_s_per_layer.get(_framework_name(w), 0.0) * m.layers
    ttft = pre_s + round_s + dispatch + zeros
    tpot = step + zeros
    return _serving_projection(s, t, step, tokens, model_flops, r.peak_flops, mem, ttft, tpot,
                               pp * dec["_dense_c"], pp * dec["_dense_m"],
                               pp * dec["_flops"] + zeros, pp * dec["_attn_flops"] + zeros,
                               pp * dec["_attn_c"], pp * dec["_attn_m"],
                               pp * dec["_wbytes"] + zeros)


def _serving_projection(s: Array, t: dict[str, Array], step: Array, tokens: Array,
                        model_flops: Array, peak: float, mem: Array, ttft: Array, tpot: Array,
                        dense_c: Array, dense_m: Array, flops: Array, attn_flops: Array,
                        attn_c: Array, attn_m: Array, wbytes: Array) -> Projection:
    zeros = np.zeros_like(step)
    return Projection(
        seq=s.ravel(), times=t,
        binding={"dense": np.where(dense_c >= dense_m, COMPUTE, MEMORY) + zeros,
                 "attention": np.where(attn_c >= attn_m, COMPUTE, MEMORY) + zeros,
                 "elementwise": np.full_like(step, MEMORY),
                 "optimizer": np.full_like(step, MEMORY),
                 "communication": np.full_like(step, NETWORK),
                 "overhead": np.full_like(step, HOST)},
        compute_s={"dense": dense_c + zeros, "attention": attn_c + zeros},
        memory_s={"dense": dense_m + zeros, "attention": attn_m + zeros},
        flops={"dense": flops + zeros, "attention": attn_flops + zeros},
        bytes={"dense": wbytes + zeros}, step_s=step, tokens=tokens, model_flops=model_flops,
        peak=peak, memory_gib=mem, ttft_s=ttft, tpot_s=tpot)


def project(w: Workload, r: GpuRates, g: Grid, seq: Array | list[int],
            cal: Calibration = CAL) -> Projection:
    """The one entry: training or serving, every layout in `g`, every sequence length."""
    s = np.asarray(seq, dtype=float)
    p = train(w, r, g, s, cal) if w.training else serve(w, r, g, s, cal)
    return p if cal.stack_efficiency == 1.0 else _at_efficiency(p, cal.stack_efficiency)


def _at_efficiency(p: Projection, e: float) -> Projection:
    """Every time `1/e` as long: a stack measured to reach `e` of the modelled rate."""
    def div(d: dict[str, Array]) -> dict[str, Array]:
        return {k: v / e for k, v in d.items()}

    return replace(p, times=div(p.times), compute_s=div(p.compute_s),
                   memory_s=div(p.memory_s), step_s=p.step_s / e, parts=div(p.parts),
                   ttft_s=p.ttft_s / e if p.ttft_s is not None else None,
                   tpot_s=p.tpot_s / e if p.tpot_s is not None else None)
