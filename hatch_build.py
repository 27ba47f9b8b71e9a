"""Build hook: an editable install imports `advisor.catalog` and `advisor.probes` too.

The wheel ships the repo's top-level `catalog/` and `probes/` inside the advisor package
(pyproject.toml, force-include). An editable install instead puts the repo root on
sys.path, where those folders are top-level, so this hook adds a small import hook to the
editable wheel that maps the two advisor names onto the repo folders. Code, tests and
`python -m probes` then see the same files under the same names either way.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "_advisor_editable_subpackages"
SUBPACKAGES = {"advisor.catalog": "catalog", "advisor.probes": "probes"}

FINDER = '''\
"""advisor, installed editable: advisor.catalog and advisor.probes are the repo's
top-level catalog/ and probes/ folders, as the wheel ships them inside advisor."""

import sys

FOLDERS = {folders!r}


class SubpackageFinder:
    """Consulted last: only for the two names, which no other finder knows here."""

    def find_spec(self, fullname, path=None, target=None):
        folder = FOLDERS.get(fullname)
        if folder is None:
            return None
        import importlib.util
        import os

        init = os.path.join(folder, "__init__.py")
        return importlib.util.spec_from_file_location(
            fullname, init, submodule_search_locations=[folder])

    def invalidate_caches(self):
        pass


if not any(isinstance(f, SubpackageFinder) for f in sys.meta_path):
    sys.meta_path.append(SubpackageFinder())
'''


class EditableSubpackages(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version != "editable":
            return
        root = Path(self.root).resolve()
        folders = {name: str(root / folder) for name, folder in SUBPACKAGES.items()}
        self._generated = Path(tempfile.mkdtemp(prefix="advisor-editable-"))
        (self._generated / f"{MODULE}.py").write_text(FINDER.format(folders=folders))
        (self._generated / f"{MODULE}.pth").write_text(f"import {MODULE}\n")
        # Replaces the force-include above for this build: nothing is copied, only mapped.
        build_data["force_include_editable"] = {
            str(self._generated / f"{MODULE}.py"): f"{MODULE}.py",
            str(self._generated / f"{MODULE}.pth"): f"{MODULE}.pth",
        }

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        generated = getattr(self, "_generated", None)
        if generated is not None:
            shutil.rmtree(generated, ignore_errors=True)
