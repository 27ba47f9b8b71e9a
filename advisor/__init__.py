"""advisor: should this workload move from GPU X to GPU Y?"""

from pathlib import Path as _Path

__version__ = "0.1.0"
DISTRIBUTION = "gpu-upgrade-advisor"
"""The name on the package index (`advisor` there is an unrelated project); the command and
the import package stay `advisor`."""

# Run from a clone (`python -m advisor` in its root, where this source folder shadows any
# installed copy), advisor.catalog and advisor.probes are the repo's top-level catalog/ and
# probes/, as the wheel ships them inside the package and an editable install maps them.
_here = _Path(__file__).resolve().parent
if not (_here / "probes").is_dir() and (_here.parent / "probes" / "__init__.py").is_file() \
        and (_here.parent / "catalog" / "__init__.py").is_file():
    __path__.append(str(_here.parent))
