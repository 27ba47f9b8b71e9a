"""The shipped catalog, loaded once for the unit tests that project or price with it (it is
frozen: no test can change it for another). Loaded under a home of its own: a session
fixture is made before the per-test home is set, and must not read the developer's."""

from __future__ import annotations

import pytest

from advisor.core.model.catalog import Catalog
from advisor.io.catalog_store import load_catalog


@pytest.fixture(scope="session")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("ADVISOR_HOME", str(tmp_path_factory.mktemp("catalog-home")))
        return load_catalog()
