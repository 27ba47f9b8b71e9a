"""On-device probes: measure what this box actually achieves.

The package needs nothing but torch and the standard library (nvidia-ml-py,
flash-attn and Transformer Engine are used when installed), so the folder can be
copied onto a rented box and run with `python -m probes run --out box.json`.
It never imports `advisor`; the decision engine reads the JSON record it writes.
"""

SCHEMA = "advisor.probe-record"
VERSION = 1
