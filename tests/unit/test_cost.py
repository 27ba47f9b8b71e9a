"""Cost and time: $/token, value per dollar, break-even price, job cost, power and buy-back."""

from __future__ import annotations

import pytest

from advisor.core.economics.cost import (
    CurrentScaling,
    PriceQuote,
    break_even_price,
    buy_back,
    gpu_power_w,
    job_cost,
    quote,
    usd_per_mtok,
    value_per_dollar,
)
from advisor.core.model.workload import Workload
from advisor.core.projection.rates import resolve_rates
from advisor.io.catalog_store import load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_usd_per_million_tokens() -> None:
    # $3.60/h at 1000 tokens/s: 3.6M tokens per dollar-hour -> $1 per 1M
    assert usd_per_mtok(3.6, 1000.0) == pytest.approx(1.0)


def test_published_value_examples() -> None:
    assert value_per_dollar(4.5, 3.4) == pytest.approx(1.32, abs=0.005)  # B200 vs RTX PRO 6000
    assert 1 - 1 / value_per_dollar(3.0, 2.36) == pytest.approx(0.21, abs=0.005)  # 21% cheaper


def test_break_even_price_ties_dollars_per_token() -> None:
    be = break_even_price(4.0, 1.8)
    assert usd_per_mtok(be, 1800.0) == pytest.approx(usd_per_mtok(4.0, 1000.0))


def test_quotes_prefer_the_user_and_mark_defaults(catalog) -> None:
    user = quote("h200-sxm", {"h200-sxm": 3.1}, catalog)
    assert user == PriceQuote(usd_per_hour=3.1, source="user", label="your quote")
    default = quote("h200-sxm", {}, catalog)
    assert default is not None and default.source == "default"
    assert quote("v100-pcie", {}, catalog) is None


def test_job_cost_arithmetic() -> None:
    w = Workload(model="llama-3.1-8b", seq_lens=[4096], gpus=8, token_budget=1e9)
    j = job_cost(w, 1000.0, PriceQuote(usd_per_hour=2.0, source="user", label="x"), 500.0,
                 0.10, power_cap_kw=3.0)
    hours = 1e9 / 8000 / 3600
    assert j.wall_clock_h == pytest.approx(hours)
    assert j.usd == pytest.approx(2.0 * 8 * hours)
    assert j.gpu_days == pytest.approx(8 * hours / 24)
    assert j.power_kw == pytest.approx(4.0) and j.energy_kwh == pytest.approx(4.0 * hours)
    assert j.energy_usd == pytest.approx(0.4 * hours)
    assert j.within_power_cap is False and j.max_gpus_under_cap == 6


def test_power_between_idle_and_tdp(catalog) -> None:
    w = Workload(model="llama-3.1-8b", seq_lens=[4096])
    r = resolve_rates(catalog.gpu("rtx-pro-6000-bw-server"), w)  # catalog idle 60 W, TDP 600 W
    assert gpu_power_w(r, 0.0) == 60.0 and gpu_power_w(r, 1.0) == 600.0
    assert gpu_power_w(r, 0.5) == pytest.approx(330.0)


class TestBuyBack:
    def _scaling(self, catalog, **kw) -> CurrentScaling:
        w = Workload.model_validate({"model": "llama-3.1-8b", "seq_lens": [8192],
                                     "zero_stage": 2, "gpus": 8} | kw)
        return CurrentScaling(w, resolve_rates(catalog.gpu("h200-sxm"), w), 8192)

    def test_matches_the_target_cluster_with_a_comm_penalty(self, catalog) -> None:
        s = self._scaling(catalog, nic_gbit=100)
        base = s.per_gpu(8, 1)
        b = buy_back(s, base * 8 * 1.7, None, 700.0)
        assert b.gpus is not None and b.gpus * (b.tokens_per_s_per_gpu or 0) >= base * 8 * 1.7
        assert b.gpus == 16 and b.nodes == 2  # whole nodes past one
        assert b.comm_penalty is not None and b.comm_penalty > 0  # a 100 Gbit NIC now binds
        assert b.power_kw == pytest.approx(16 * 0.7)

    def test_a_fixed_global_batch_caps_data_parallelism(self, catalog) -> None:
        s = self._scaling(catalog, global_batch=8)
        b = buy_back(s, s.per_gpu(8, 1) * 8 * 1.7, None, None)
        assert b.gpus is None and "global batch of 8" in b.note


# --- buy-back layouts: generated, not scanned -----------------------------------------------

from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from advisor.core.economics.cost import BUY_BACK_MAX_FACTOR  # noqa: E402


def _scanned_layouts(w: Workload, fixed: bool, start: int) -> list[tuple[int, int]]:
    """The definition: every data-parallel size from the start up to 64x, filtered."""
    group, per_node, batch = w.tp * w.pp * w.cp, w.gpus_per_node, w.sequences_per_step
    out = []
    for dp in range(max(w.dp, -(-start // group)), w.dp * BUY_BACK_MAX_FACTOR + 1):
        n = dp * group
        if (fixed and batch % (w.micro_batch * dp)) or dp % w.ep:
            continue
        if n <= per_node:
            out.append((n, 1))
        elif n % per_node == 0:
            out.append((n, n // per_node))
    return out


@settings(max_examples=300, deadline=None, derandomize=True)
@given(tp=st.sampled_from([1, 2, 4]), pp=st.sampled_from([1, 2, 3]), dp=st.integers(1, 12),
       ep=st.sampled_from([1, 2, 4]), per_node=st.sampled_from([1, 2, 4, 8, 6]),
       micro=st.sampled_from([1, 2, 3]), acc=st.sampled_from([None, 1, 2, 6, 12]),
       start=st.integers(0, 200))
@example(tp=1, pp=1, dp=2, ep=2, per_node=1, micro=1, acc=6, start=0)  # odd divisors of the batch
@example(tp=2, pp=3, dp=4, ep=1, per_node=4, micro=1, acc=None, start=0)  # group > node
def test_layouts_are_those_a_scan_would_find(tp, pp, dp, ep, per_node, micro, acc, start):
    gpus = tp * pp * dp
    if dp % ep or (gpus % per_node and gpus > per_node):
        return
    model = {"layers": 2, "hidden": 256, "heads": 2, "kv_heads": 2, "ffn": 512, "vocab": 1000}
    if ep > 1:
        model |= {"experts": 8, "active_experts": 2}
    w = Workload(model=model, seq_lens=[1024], tp=tp, pp=pp, ep=ep, gpus=gpus,
                 nodes=max(1, gpus // per_node), micro_batch=micro,
                 global_batch=micro * dp * acc if acc else None)
    scaling = CurrentScaling(w, None, 1024)  # type: ignore[arg-type]  # layouts need no rates
    assert list(scaling.layouts(start)) == _scanned_layouts(w, scaling.fixed_batch, start)
