from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def run_advisor(*args: str, timeout: float = 120, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: a fresh interpreter, no TTY (`env` added to this one's)."""
    return subprocess.run(
        [sys.executable, "-m", "advisor", *args],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
        env={**os.environ, **env} if env else None,
    )


@pytest.fixture
def advisor_cli():
    return run_advisor


@pytest.fixture
def www(tmp_path: Path):
    """A local HTTP server over a folder: (the folder, its base URL)."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    root = tmp_path / "www"
    root.mkdir()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True).start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
