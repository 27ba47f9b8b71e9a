"""The messages between the wizard app and its screens, so that no screen imports the app.

Down, from the app to the screen on top: a result the engine made (or could not make) for
the answers as they stand, and the catalog or this box's hardware arriving after the first
paint. Up, from a step to the app: ask for a result, go to a step, and say that a step has
its widgets and its focus (the keys typed meanwhile may go to it). Each is a typed
dataclass; the down ones do not bubble back up to the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from textual.message import Message

if TYPE_CHECKING:
    from textual.screen import Screen

    from advisor.core import Report

Kind = Literal["report", "preview", "ranking"]
"""What the app asks the engine for: the report of the answers; a preview for the
Workload step (before targets exist); every catalog GPU ranked."""
KINDS: tuple[Kind, ...] = ("report", "preview", "ranking")


@dataclass
class ResultReady(Message, bubble=False):
    """The result of `kind` for the answers as they stand (possibly the one already shown)."""

    kind: Kind
    report: Report


@dataclass
class ResultComputing(Message, bubble=False):
    """The answers changed: the result of `kind` is being made in a worker."""

    kind: Kind


@dataclass
class ResultFailed(Message, bubble=False):
    """The engine refuses the answers for `kind`: `text` says why, in one line."""

    kind: Kind
    text: str


class CatalogLoaded(Message, bubble=False):
    """The catalog finished loading after the first paint (only the first step is up)."""


class HardwareDetected(Message, bubble=False):
    """This box's GPUs and stack were detected after the first paint."""


@dataclass
class AskResult(Message):
    """A step asks for the result of `kind`: the app answers with one of the three above."""

    kind: Kind


@dataclass
class GoToStep(Message):
    """Show step `step` (Next, Back)."""

    step: int


@dataclass
class StepReady(Message):
    """Step `step` has composed, or was shown again, with its focus set: keys typed while
    it was built may go to it, and the step after it may be built ahead."""

    screen: Screen[None]
    step: int
