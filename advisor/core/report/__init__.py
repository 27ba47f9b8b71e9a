"""The decision report: its TOML form, answers files, and what changed between two reports."""
