"""Where advisor keeps the user's own data: pulled catalogs and price sheets, imported probes.

`$ADVISOR_HOME` wins (tests and shared team boxes point it somewhere explicit); otherwise
the platform's user data folder, from platformdirs: `$XDG_DATA_HOME/advisor` or
`~/.local/share/advisor` on Linux, `~/Library/Application Support/advisor` on macOS,
`%LOCALAPPDATA%\\advisor` on Windows. Nothing here creates folders: readers must work
offline on a fresh machine where none of this exists yet.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "advisor"


def data_dir() -> Path:
    """The root of the user's advisor data."""
    home = os.environ.get("ADVISOR_HOME")
    if home:
        return Path(home).expanduser()
    from platformdirs import user_data_path  # imported when needed: not for `--help`

    return user_data_path(APP, appauthor=False)


def cache_dir() -> Path:
    """What advisor can rebuild from its own files (the decoded catalog): `$ADVISOR_HOME/cache`,
    else the platform's user cache folder (`~/.cache/advisor` on Linux)."""
    home = os.environ.get("ADVISOR_HOME")
    if home:
        return Path(home).expanduser() / "cache"
    from platformdirs import user_cache_path

    return user_cache_path(APP, appauthor=False)


def pulled_dir() -> Path:
    """Pulled catalog overlays and price sheets, each with its fetch metadata."""
    return data_dir() / "pulled"


def probes_dir() -> Path:
    """Imported probe records, one per catalog id."""
    return data_dir() / "probes"


def unsaved_path(kind: str, suffix: str) -> Path:
    """Where a result goes when the path named for it cannot take it after the work is
    done (the disk filled, a FIFO had no reader): a new file the error line names."""
    from datetime import datetime

    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return data_dir() / "unsaved" / f"{kind}-{stamp}-{os.getpid()}{suffix}"
