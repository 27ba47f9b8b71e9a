"""Ctrl-C from advisor's first line: exit 130 and one line, never a traceback, whenever it
lands: while the command line imports (the startup handler of `advisor.__main__`), as
`main` takes over, or while a command loads the engine (a KeyboardInterrupt in `main`).

Deterministic: no timer. The child runs with `-X importtime`, which prints a line as each
import completes; the signal is sent as soon as the line of the module named is read, so
it always lands after that import and before the command can finish (`decide` takes
seconds after the last of these). The only moment left out is the interpreter's own
start-up before the advisor package's first line runs, which is Python's, not advisor's
(see `advisor/__init__.py`).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = str(ROOT / "examples" / "answers.toml")


def interrupt_after(module: str, args: list[str], start: tuple[str, ...] = ("-m", "advisor")
                    ) -> tuple[int, list[str]]:
    """Run `python -X importtime -m advisor ARGS` (or START ARGS), send SIGINT once `module`
    is imported; return the exit code and the stderr lines that are not import-time lines."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", *start, *args],
                            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    ready = re.compile(rf"\|\s+{re.escape(module)}$")
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if ready.search(line.rstrip()):
            proc.send_signal(signal.SIGINT)
            break
    else:
        proc.wait(timeout=60)
        raise AssertionError(f"{module} was never imported: {''.join(seen)[-2000:]}")
    rest = proc.stderr.read()
    proc.wait(timeout=60)
    said = [ln for ln in rest.splitlines() if ln.strip() and not ln.startswith("import time:")]
    return proc.returncode, said


@pytest.mark.parametrize("module", [
    "pathlib",  # the advisor package itself is importing, before advisor.__main__
    "advisor.core.text",  # advisor.cli is importing: the startup handler answers
    "advisor.cli",  # imported: main is taking Ctrl-C over
    "advisor.core.model.catalog",  # the command is loading the catalog
    "advisor.core.projection.engine",  # ... and the engine
])
def test_ctrl_c_while_advisor_starts_is_130_and_one_line(module: str) -> None:
    rc, said = interrupt_after(module, ["decide", "--answers", ANSWERS])
    assert rc == 130, (rc, said)
    assert said == ["advisor: interrupted"], said


def test_the_package_imported_as_a_library_leaves_ctrl_c_alone() -> None:
    code = "import advisor, signal; print(signal.getsignal(signal.SIGINT).__name__)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert r.stdout.strip() == "default_int_handler", r.stderr


def test_the_console_script_takes_ctrl_c_from_the_package_on(tmp_path: Path) -> None:
    """Run as the installed `advisor` script is (argv[0] is the script), the package's
    own first import already runs under the handler."""
    script = tmp_path / "advisor"
    script.write_text("import sys\nfrom advisor.__main__ import main\nsys.exit(main())\n")
    rc, said = interrupt_after("pathlib", ["decide", "--answers", ANSWERS], start=(str(script),))
    assert rc == 130 and said == ["advisor: interrupted"], (rc, said)
