"""On-device probes: measure what this box actually achieves.

The package needs nothing but torch and the standard library (nvidia-ml-py,
flash-attn and Transformer Engine are used when installed), so the folder can be
copied onto a rented box and run with `python -m probes run --out box.json`.
It never imports `advisor`, and it imports itself only relatively, so it also
works when installed under another name. The decision engine reads the JSON
record it writes.
"""

SCHEMA = "advisor.probe-record"
# The record's layout version: bump it when a field changes meaning.
# 2: mamf_tflops is the burst MAMF (median of the 5 fastest iterations after an idle
#    gap), msmf_tflops the sustained figure; every attention entry names its kernel.
VERSION = 2
# The probe code's own version, written into every stamp next to a hash of the sources.
PROBE_VERSION = "2.1.0"
