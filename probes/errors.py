"""How a failed measurement is described in the record: one line, never a traceback."""

from __future__ import annotations


def describe(exc: BaseException, limit: int = 300) -> str:
    """`Type: first line of the message`, so a record stays readable."""
    if is_oom(exc):
        return "out of memory"
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}"[:limit]


def is_oom(exc: BaseException) -> bool:
    """CUDA/ROCm out-of-memory errors, and the CPU allocator's."""
    import torch

    text = str(exc).lower()
    return (
        isinstance(exc, torch.cuda.OutOfMemoryError)
        or "out of memory" in text
        or "can't allocate memory" in text
    )
