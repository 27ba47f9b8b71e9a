"""Every physical bound on an input number, in one place, each with why it is where it is.

Inputs come from files anyone can write: answers, reports, probe records, pulled
catalogs and price sheets. A number past these bounds is not a workload anyone runs;
refusing it at load keeps the core's arithmetic finite (no inf $/token, no NaN
GPU-days) and its searches small (a GPU count of 10^30 would otherwise be enumerated).
The bounds are generous: each is one to three orders of magnitude past the largest
real figure, so they refuse typos and hostile files, never a real deployment.

The models apply them as pydantic Field constraints (`le=MAX_GPUS`), so an error reads
"field 'workload.gpus', value 10**30: Input should be less than or equal to 262144".
NaN and infinities are refused separately, by every loader (see formats.finite_data)
and by `allow_inf_nan=False` on the input models.
"""

from __future__ import annotations

# --- sizes of what is read -------------------------------------------------------------

# Local files. Ours are small: a report is ~25 KB, the whole shipped catalog ~170 KB, a
# probe record a few hundred KiB at most. TOML is parsed in pure Python (~0.5 s/MiB on a
# slow core), so its cap is what keeps a load under a second or two; JSON is parsed in C.
MAX_TOML_BYTES = 2 * 2**20
MAX_JSON_BYTES = 8 * 2**20
# Nesting of decoded data. Our deepest document (a report) nests 7 levels.
MAX_DEPTH = 64
# Lists of text in catalogs and price sheets. Anything that is merged, validated and
# written back is linear in these, and they are short in real data: the shipped catalog
# cites at most 4 sources per group of figures, lists at most 5 aliases per GPU and 3
# open questions per entry. A cap keeps a pulled sheet from making every command slower.
MAX_CITATIONS = 32  # sources of one group of figures or one price
MAX_ALIASES = 32  # other names of one GPU
MAX_NOTES = 64  # `uncertain` notes of one entry
MAX_NOTE_CHARS = 4000  # one citation, note or build instruction
MAX_PACKAGES = 4096  # packages of one software stack: a detected one is a whole `pip freeze`

# --- the cluster ---------------------------------------------------------------------

# The largest published training clusters are ~100k-200k GPUs.
MAX_GPUS = 2**18
MAX_NODES = MAX_GPUS
# GPUs per node of a sweep: 8 per HGX node, 72 in an NVL72 rack (the largest shipped).
MAX_GPUS_PER_NODE = 72
# Scale-out NIC per GPU: 400-800 Gbit/s today; 100 Tbit/s is far past any roadmap, and
# 1 Gbit/s (plain gigabit Ethernet) is the slowest link a GPU job is run over.
MIN_NIC_GBIT = 1.0
MAX_NIC_GBIT = 100_000.0
# A power budget: from one card (10 W) to a data hall (the largest sites are ~1-2 GW).
MIN_POWER_CAP_KW = 0.01
MAX_POWER_CAP_KW = 10_000_000.0
# One GPU's board power: 1-1.4 kW today (B300); an idle GPU draws 30-150 W. The smallest
# accelerator listed (L4) is a 72 W card; nothing that runs a training or serving job
# draws under 10 W busy.
MIN_BOARD_W = 10.0
MAX_BOARD_W = 3000.0
MAX_IDLE_W = 500.0
# A per-GPU power limit (`nvidia-smi -pl`) is refused by the driver below the part's
# minimum. Published minimums, as fractions of the default (TDP) limit: A100 SXM4 80GB
# 100 of 400 W (0.25; `nvidia-smi -q` in github.com/NVIDIA/nvidia-docker/issues/1648),
# H100 SXM 200 of 700 W (0.29; "should be between 200.00 W and 700.00 W",
# github.com/stackhpc/ansible-slurm-appliance/pull/975), RTX 4090 150 of 450 W (0.33;
# github.com/1Panel-dev/1Panel/issues/11910). A limit below a quarter of the TDP is
# below every part's minimum we found, so it is refused with the part's range; a limit
# above the TDP is not a cap. (Retrieved 2026-03.)
MIN_POWER_LIMIT_FRACTION = 0.25

# --- the workload --------------------------------------------------------------------

# Context lengths: 128k-1M common, 10M the longest announced; one token is a decode step.
MIN_SEQ_LEN = 1
MAX_SEQ_LEN = 2**26
MAX_SEQ_LENS = 64  # points in one sweep
MAX_MICRO_BATCH = 2**16
MAX_GLOBAL_BATCH = 2**30  # sequences per optimizer step
# Tokens to train or serve: the largest runs are ~4e13 tokens; at least one.
MIN_TOKENS = 1.0
MAX_TOKENS = 1e18
# Model dimensions: 10x past the largest published models (e.g. 128 layers, hidden 18k,
# 256 routed experts, vocab 256k).
MAX_LAYERS = 4096
MAX_WIDTH = 2**20  # hidden, ffn, head_dim, LoRA ranks
MAX_HEADS = 2**14
MAX_VOCAB = 2**24
MAX_EXPERTS = 2**16
MAX_NAME_CHARS = 200  # a model, stage or unit name shown in tables
SHOWN_HOST_CHARS = 40  # a probe record's hostname, date and kernel as an anchor's note quotes
SHOWN_DATE_CHARS = 10  # them (the date as YYYY-MM-DD): a hostname of 100,000 characters made
# a note no model holds
SHOWN_KERNEL_CHARS = 24
# A model's stated parameter count (`--params`): at least one weight; 1e16 is ~5,000x the
# largest published models (~2e12), and the hidden size inferred from it, (N x 128 / 12)^(1/3)
# ~ 470k, is still within MAX_WIDTH.
MIN_PARAMS = 1.0
MAX_PARAMS = 1e16

# --- money and time ------------------------------------------------------------------

# $/GPU-hour: the dearest on-demand GPU is ~$15/h; an 8-GPU node quoted by mistake ~$100.
MIN_USD_PER_GPU_HOUR = 0.001
MAX_USD_PER_GPU_HOUR = 1000.0
# Electricity, $/kWh: ~0.03-0.40 in practice.
MAX_USD_PER_KWH = 5.0
MAX_TIME_PREMIUM = 10.0  # +1000% $/token still worth paying to finish sooner
MIN_DEADLINE_DAYS = 1e-5  # about a second
MAX_DEADLINE_DAYS = 36_500.0  # a century

# --- rates (probe records, pipeline stages) ------------------------------------------

# Lower bounds matter as much as upper ones: a rate of 1e-320 is "positive", and the time
# it gives overflows to inf. Each floor is far below anything measurable on real hardware.
# One device's matmul or attention rate: B200 dense fp4 is ~9,000 TFLOPS; a toy CPU run
# measures ~0.01.
MIN_TFLOPS = 1e-6
MAX_TFLOPS = 100_000.0
# One device's memory, link or network bandwidth, GB/s: HBM3e is ~8,000.
MIN_GBPS = 1e-6
MAX_GBPS = 100_000.0
# A whole stage's throughput, tokens or work units per second, and one device's (a measured
# anchor, a workload probe's figure): 1e12 is ~1,000x a large serving fleet; 1e-9 is one
# unit every 30 years.
MIN_RATE_PER_S = 1e-9
MAX_TOKENS_PER_S = 1e12
# Model FLOPs utilisation of a stage. The lowest anyone runs is batch-1 decode, which is
# bound by memory: a 70B model at ~30 tokens/s on an H100 is 2 x 70e9 x 30 = 4.2 TFLOPS of
# 989, 0.4%; a tenth of that is the floor. The ceiling is the peak itself (best-shape
# GEMMs reach 70-93% of it: see the catalog's MAMF figures).
MIN_MFU = 1e-3
MAX_MFU = 1.0
# FLOPs per token: 6N for a 10T-parameter model is 6e13.
MIN_FLOPS_PER_TOKEN = 1.0
MAX_FLOPS_PER_TOKEN = 1e17
MIN_TOKENS_PER_UNIT = 1.0  # a work unit carries at least one token
MAX_HOP_S = 3600.0  # a serial copy per work unit
MAX_SECONDS = 1e7  # a probe run or measurement: ~4 months
# A measured or limiting time (a step, a time per output token or to the first, a probe's
# timed step or kernel): a microsecond. No training step (thousands of kernels), output token
# (a pass over the weights) or timed kernel is shorter; "positive" alone let 5e-324 ms
# through, which is 0 once in seconds and made a rate of it infinite.
MIN_MS = 1e-3
MIN_STEP_S = MIN_MS / 1000
MAX_DEVICES = 4096  # GPUs one probe run sees on one box
MAX_GPU_MEMORY_GIB = 1024.0  # one GPU's memory in the catalog: 288 GB on B300
MAX_DEVICE_GIB = 1e6  # one device's memory as torch reports it: 288 GB on B300
# An efficiency or fraction of a catalog figure (a measured rate over the catalog's peak,
# a copy over the catalog's bandwidth, a spread): 0-1 by construction, a little above 1
# where boost clocks beat a peak quoted at base clock. Twice the catalog's figure is a
# record measured on another part than the one it names.
MAX_SHARE = 2.0
# Profiled op time over the timed step: on a CPU each intra-op thread's time is summed, and
# the profiled steps run slower than the timed ones on a loaded box; a box's core count bounds it.
MAX_BUSY_SHARE = 1024.0
MAX_COUNT = 2**40  # bytes moved or shapes tried in one measurement
MAX_PIPELINE_STAGES = 64

# --- the GPU-count sweep -------------------------------------------------------------

MAX_SWEEP_GPUS = 4096
MAX_SWEEP_COUNTS = 64
MAX_TARGETS = 64

# --- pulls ---------------------------------------------------------------------------

MAX_TIMEOUT_S = 600.0  # one attempt, connect to last byte
MAX_RETRIES = 10
MAX_BACKOFF_S = 8.0  # the longest wait between two attempts
MAX_PULL_S = 900.0  # every attempt and wait of one pull together
MAX_DOWNLOAD_BYTES = 64 * 2**20  # the largest body cap a pull may set (default 8 MiB)
MAX_REDIRECTS = 20

# --- the catalog's figures against their family ----------------------------------------

# Members of one architecture family share a process, memory generation and matrix unit
# design, so a peak or a bandwidth far from the family's median is a typo or a hostile
# entry. In the shipped catalog the widest spread of a figure the projection reads is 6.6x
# (Blackwell bf16: the 210 TFLOPS RTX 5090 against the other members' median of 1,377;
# an H20-class Hopper would be ~7x below an H100), so 10x from the median of the other
# members is refused. A family needs more than two members stating the figure to judge.
MAX_FAMILY_FACTOR = 10.0
MIN_FAMILY_MEMBERS = 2

# --- what a result can be ------------------------------------------------------------

# A price is a ratio to the current GPU's ("3.4x") within these: the cheapest listed
# GPU-hour (~$0.3, a T4) and the dearest (~$15, a GB300) are 50x apart; 1000x is a
# price typed in the wrong unit (per node, per minute, in cents).
MAX_PRICE_RATIO = 1000.0
# Speedup of one GPU over another per GPU, after each is re-tuned: the slowest and the
# fastest listed parts are ~40x apart in peak (T4 fp16 vs GB300 bf16) and a layout that
# must offload to the host on a small part can lose another ~10x; 1000x either way is
# no pair of real GPUs.
MAX_SPEEDUP = 1000.0
# A job's wall-clock: a century (as MAX_DEADLINE_DAYS) is no job anyone plans.
MAX_WALL_CLOCK_H = MAX_DEADLINE_DAYS * 24
MAX_TOKENS_PER_USER = 1e6  # an interactivity target: a microsecond per output token
MIN_TOKENS_PER_USER = 1 / MAX_SECONDS  # a token per MAX_SECONDS: the longest time per token
