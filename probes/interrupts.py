"""Ctrl-C for the probe commands: exit 130 with no traceback, at every moment.

`install()` runs first thing in `python -m probes` (and in `run_command`), before torch
is imported, and follows the run through three phases:

- starting: nothing is measured yet. Ctrl-C ends the process at once with 130. Leaving
  with os._exit means no half-imported torch is ever imported a second time (which is
  what gives "cannot load module more than once per process") and no traceback.
- measuring: the first Ctrl-C asks the suite to stop after the current measurement; the
  second raises KeyboardInterrupt, which the runner catches, keeping the partial record.
  From then on Ctrl-C is only counted, so the record can still be finished and written.
- finishing: the record is being written and summarised; Ctrl-C is counted, and the
  command exits 130 once the record is safe.

The handler writes with os.write, never print(), so it cannot collide with a print that
it interrupted. Stdlib only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

EXIT_INTERRUPTED = 130
STARTING, MEASURING, FINISHING = "starting", "measuring", "finishing"


def _say(prog: str, message: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, f"{prog}: {message}\n".encode(errors="replace"))


class Interrupts:
    """The process's SIGINT policy; one instance, `CONTROLLER`, is shared by every caller."""

    def __init__(self) -> None:
        self.phase = STARTING
        self.count = 0  # Ctrl-C presses seen since install()
        self.measuring_count = 0  # of which while measuring
        self.raised = False
        self.installed = False
        self.prog = "probes"
        self._previous: Any = None

    @property
    def requested(self) -> bool:
        return self.count > 0

    def handler(self, signum: int, frame: object) -> None:
        self.count += 1
        if self.phase == STARTING:
            _say(self.prog, "interrupted before any measurement; nothing was written")
            os._exit(EXIT_INTERRUPTED)
        if self.phase == MEASURING:
            self.measuring_count += 1
            if self.measuring_count == 1:
                _say(self.prog, "stopping after the current measurement (Ctrl-C again to stop now)")
                return
            if not self.raised:
                self.raised = True
                self.phase = FINISHING  # a third Ctrl-C must not break the clean-up
                raise KeyboardInterrupt
        # FINISHING: counted; the command exits 130 once the record is written.

    def install(self, prog: str = "probes") -> bool:
        """Take over SIGINT (from the main thread only); False elsewhere."""
        if threading.current_thread() is not threading.main_thread():
            return False
        self.prog = prog
        if not self.installed:
            # Installed even when SIGINT was inherited as ignored (a shell's background job):
            # a probe run must always honour Ctrl-C.
            self._previous = signal.signal(signal.SIGINT, self.handler)
            self.installed = True
        return True

    def uninstall(self) -> None:
        if self.installed and threading.current_thread() is threading.main_thread():
            previous = self._previous if self._previous is not None else signal.default_int_handler
            signal.signal(signal.SIGINT, previous)
        self.installed = False
        self.reset()

    def reset(self) -> None:
        self.phase = STARTING
        self.count = self.measuring_count = 0
        self.raised = False

    def enter(self, phase: str) -> None:
        self.phase = phase


CONTROLLER = Interrupts()


@contextmanager
def command_scope(prog: str = "probes") -> Iterator[Interrupts]:
    """For a command's whole life: install, hand over the controller, restore afterwards."""
    owned = not CONTROLLER.installed
    CONTROLLER.install(prog)
    try:
        yield CONTROLLER
    finally:
        if owned:
            CONTROLLER.uninstall()
