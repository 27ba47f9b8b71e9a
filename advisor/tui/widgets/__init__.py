"""Reusable widgets of the wizard."""
