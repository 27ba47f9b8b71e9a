"""advisor: should this workload move from GPU X to GPU Y?"""

__version__ = "0.1.0"
