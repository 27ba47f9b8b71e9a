"""Cost and time: $/token, value per dollar, break-even price, job cost, power and buy-back."""

from __future__ import annotations

import pytest

from advisor.core.economics.buyback import buy_back
from advisor.core.economics.cost import (
    PriceQuote,
    break_even_price,
    gpu_power_w,
    job_cost,
    quote,
    usd_per_mtok,
    value_per_dollar,
)
from advisor.core.model.workload import Workload
from advisor.core.projection.layout import as_run
from advisor.core.projection.rates import resolve_rates


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
    j = job_cost(8, 1e9, 1000.0, PriceQuote(usd_per_hour=2.0, source="user", label="x"), 500.0,
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
    r = resolve_rates(catalog.gpu("rtx-pro-6000-bw-server"), w, catalog_gpus=catalog.gpus)
    assert gpu_power_w(r, 0.0) == 60.0 and gpu_power_w(r, 1.0) == 600.0
    assert gpu_power_w(r, 0.5) == pytest.approx(330.0)


class TestBuyBack:
    def _setup(self, catalog, **kw):
        w = Workload.model_validate({"model": "llama-3.1-8b", "seq_lens": [8192],
                                     "zero_stage": 1, "gpus": 8} | kw)
        r = resolve_rates(catalog.gpu("h200-sxm"), w, catalog_gpus=catalog.gpus)
        layout = as_run(w).choice(0)
        from advisor.core.projection.engine import project

        base = float(project(w, r, as_run(w), [8192]).tokens_per_s[0, 0])
        return w, r, layout, base

    def test_matches_the_target_cluster_with_a_comm_penalty(self, catalog) -> None:
        w, r, layout, base = self._setup(catalog, nic_gbit=25)
        b = buy_back(w, r, layout, 8192, base * 8 * 1.7, None, 700.0)
        assert b.gpus is not None and b.gpus * (b.tokens_per_s_per_gpu or 0) >= base * 8 * 1.7
        assert b.gpus >= 16 and b.nodes == b.gpus // 8  # whole nodes past one
        assert b.comm_penalty is not None and b.comm_penalty > 0  # a 25 Gbit NIC now binds
        assert b.power_kw == pytest.approx(b.gpus * 0.7)

    def test_a_fixed_global_batch_caps_data_parallelism(self, catalog) -> None:
        w, r, layout, base = self._setup(catalog, global_batch=8)
        b = buy_back(w, r, layout, 8192, base * 8 * 1.7, None, None)
        assert b.gpus is None and "global batch of 8" in b.note

