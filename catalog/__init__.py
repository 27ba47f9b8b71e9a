"""Shipped catalog data (TOML), read through importlib.resources and validated by advisor.core."""
