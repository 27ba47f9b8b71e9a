"""advisor: should this workload move from GPU X to GPU Y?"""

__version__ = "0.1.0"
DISTRIBUTION = "gpu-upgrade-advisor"
"""The name on the package index (`advisor` there is an unrelated project); the command and
the import package stay `advisor`."""
