"""The projection engine: rates, the per-bucket roofline, memory, calibration, uncertainty."""
