"""Where advisor keeps the user's own data: pulled catalogs and price sheets, imported probes.

`$ADVISOR_HOME` wins (tests and shared team boxes point it somewhere explicit), then
`$XDG_DATA_HOME/advisor`, then `~/.local/share/advisor`. Nothing here creates folders:
readers must work offline on a fresh machine where none of this exists yet.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """The root of the user's advisor data."""
    home = os.environ.get("ADVISOR_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg).expanduser() / "advisor"
    return Path.home() / ".local" / "share" / "advisor"


def pulled_dir() -> Path:
    """Pulled catalog overlays and price sheets, each with its fetch metadata."""
    return data_dir() / "pulled"


def probes_dir() -> Path:
    """Imported probe records, one per catalog id."""
    return data_dir() / "probes"
