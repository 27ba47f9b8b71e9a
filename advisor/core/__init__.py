"""Pure decision model: no textual, no torch."""
