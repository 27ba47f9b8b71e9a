"""The job's stack as the user types it: "torch==2.7.1+cu128 flash-attn==2.8.3".

Every declared package is one the job needs, so the software gate checks each one (or
says it has no support data for it); nothing typed is silently ignored.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from advisor.core import Stack


def parse_stack(text: str) -> Stack:
    """A declared Stack; ValueError with the message to show."""
    from pydantic import ValidationError

    from advisor.core import Stack

    packages: dict[str, str] = {}
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        name, sep, version = item.partition("==") if "==" in item else item.partition("=")
        if not sep or not name or not version:
            raise ValueError(f"{item}: write package==version, e.g. torch==2.7.1+cu128")
        if name in packages:
            raise ValueError(f"{name} is listed twice")
        packages[name] = version
    if "torch" not in packages:
        raise ValueError("name the torch build, e.g. torch==2.7.1+cu128")
    try:
        return Stack(source="declared", packages=packages, needs=list(packages))
    except ValidationError as exc:
        raise ValueError(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None


def format_stack(stack: Stack) -> str:
    return " ".join(f"{name}=={version}" for name, version in stack.packages.items())
