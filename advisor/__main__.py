"""`advisor` and `python -m advisor`: the program's entry.

Ctrl-C is one line and exit 130 from the package's first line (`advisor/__init__.py`
installs the handler when the process is the advisor command, before any other import);
it stays for every command that has nothing to keep; the wizard and `advisor probe` take
Ctrl-C as a KeyboardInterrupt while they run (see `advisor.cli.main`). A SIGINT that is
ignored (a background job) stays ignored.
"""

import os

from advisor import take_ctrl_c

take_ctrl_c()  # started some other way (runpy from a test, a wrapper): the same from here


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
    if not gc.isenabled():
        # The interpreter collects once more as it exits, collector off or not: a walk of
        # every object the command made (~70 ms of a `compare`'s CPU under load, ~30 ms on
        # an idle box) to free what the process is about to give back whole. Frozen, they
        # are left to the exit; the atexit handlers and the flush of stdout still run.
        gc.freeze()
    if code == EXIT_INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
