"""advisor: should this workload move from GPU X to GPU Y?

Started as the `advisor` command (the console script, or `python -m advisor`), Ctrl-C is
one line and exit 130 from this package's first line: the handler is installed here,
before anything of advisor is imported (this package is imported before
`advisor.__main__`, and the command line's own imports take most of the start-up). Only
the interpreter's own start-up before it (initialisation, `site` and the environment's
`.pth` files, the console script's first line) is Python's: a Ctrl-C there is CPython's
"Fatal Python error: init_import_site" or a KeyboardInterrupt traceback, and no entry
point can run earlier (installers drop any `-S` from a script's `#!python` line). Imported
as a library, the package leaves signals alone.
"""

import _signal  # the interpreter's own, loaded at start-up: `signal` takes ~10 ms to import
import os  # already imported by `site`
import sys


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C: one line, exit 130, at once (nothing half written: writes are atomic)."""
    os.write(2, b"advisor: interrupted\n")
    os._exit(130)


def take_ctrl_c() -> None:
    """Make Ctrl-C one line and exit 130; a SIGINT that is ignored (a background job), or
    already taken over, stays as it is."""
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _interrupted)


def _started_as_the_command() -> bool:
    """Whether this process is `advisor` itself: its console script, or `python -m advisor`
    (whose argv[0] is still "-m" while this package is imported)."""
    argv = getattr(sys, "argv", None) or [""]
    if os.path.basename(argv[0]).removesuffix(".exe") == "advisor":
        return True
    given = getattr(sys, "orig_argv", [])
    pairs = zip(given, [*given[1:], ""], strict=True)
    return argv[0] == "-m" and any(a == "-madvisor" or (a, b) == ("-m", "advisor")
                                   for a, b in pairs)


if _started_as_the_command():
    take_ctrl_c()

from pathlib import Path as _Path  # noqa: E402  (after the handler: ~5 ms of imports)

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
