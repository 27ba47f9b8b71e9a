"""`advisor` and `python -m advisor`: the program's first lines.

Ctrl-C is one line and exit 130 from here on. The handler is installed before anything
else is imported, because the command line's own imports take most of the start-up
(pydantic, numpy, the engine): a Ctrl-C there would otherwise be a KeyboardInterrupt
traceback. It stays for every command that has nothing to keep; the wizard and `advisor
probe` take Ctrl-C as a KeyboardInterrupt while they run (see `advisor.cli.main`). Only
the interpreter's own start-up, before this module runs, is left to Python's default (the
process ends by SIGINT, which a shell reports as 130). A SIGINT that is ignored (a
background job) stays ignored.
"""

import _signal  # the interpreter's own, loaded at start-up: `signal` takes ~10 ms to import
import os  # already imported by `site`


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C: one line, exit 130, at once (nothing half written: writes are atomic)."""
    os.write(2, b"advisor: interrupted\n")
    os._exit(130)


if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _interrupted)


def main() -> int:
    """The console script's entry: the command line, imported under the handler above.

    A command interrupted through a KeyboardInterrupt (the wizard, `advisor probe`) ends
    here with `os._exit(130)`, its output flushed: CPython 3.11 keeps a process-wide
    "unhandled Ctrl-C" flag that code run through its PyRun_* C API sets even when the
    KeyboardInterrupt is then caught, and would end the process by SIGINT at exit after
    `advisor.cli.main` had caught it and said so (3 of 200 interrupts under load, when
    every command took Ctrl-C as an exception)."""
    import contextlib
    import gc
    import sys

    # A short command runs without the cycle collector: what it allocates is modules,
    # classes and the engine's arrays, kept until the process ends or freed by reference
    # count. With it on, a `compare` ran some 130 collections (~40 ms of its ~450 ms CPU)
    # that found about 1,600 objects in cycles, and `advisor validate` peaked at the same
    # memory either way. The wizard and the probes, which stay, turn it back on
    # (`advisor.heap.collect_cycles_from_here`); nothing turns it on only to exit.
    gc.disable()
    from advisor.cli import EXIT_INTERRUPTED
    from advisor.cli import main as command_line

    code = command_line()
    if code == EXIT_INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
