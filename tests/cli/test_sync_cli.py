"""`advisor prices pull` and `advisor catalog pull` as a user types them, against a stdlib
file server on 127.0.0.1, with the data folder in a temporary ADVISOR_HOME."""

from __future__ import annotations

import functools
import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]

SHEET = "gpu,usd_per_hour,label\nh100-sxm,1.99,team reserved\n"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def files(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served over http on an ephemeral port: (folder, base URL)."""
    root = tmp_path / "www"
    root.mkdir()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=root))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    watchdog = threading.Timer(60, httpd.shutdown)
    watchdog.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    watchdog.cancel()
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def run(advisor_cli) -> Run:
    """The CLI in a fresh interpreter with no TTY; its data folder is the test's ADVISOR_HOME."""
    return advisor_cli


def test_price_pull_then_show_then_unchanged(files, run: Run, advisor_home: Path) -> None:
    root, base = files
    (root / "prices.csv").write_text(SHEET)
    url = f"{base}/prices.csv"
    r = run("prices", "pull", "--allow-http", url)
    assert r.returncode == 0, r.stderr
    assert "pulled 1 price" in r.stdout
    cached = advisor_home / "pulled" / "prices.json"
    assert json.loads(cached.read_text())["url"] == url

    r = run("catalog", "show", "h100-sxm")
    assert r.returncode == 0, r.stderr
    assert "$1.99/GPU-hour (team reserved" in r.stdout and f"team price sheet {url}" in r.stdout

    r = run("prices", "pull", "--allow-http", url)  # If-Modified-Since -> 304
    assert r.returncode == 0, r.stderr
    assert "unchanged since" in r.stdout


def test_failures_are_one_line_and_keep_the_cache(files, run: Run, advisor_home: Path) -> None:
    root, base = files
    (root / "prices.csv").write_text(SHEET)
    assert run("prices", "pull", "--allow-http", f"{base}/prices.csv").returncode == 0
    cached = advisor_home / "pulled" / "prices.json"
    before = cached.read_bytes()

    r = run("prices", "pull", f"{base}/prices.csv")
    assert r.returncode == 2 and "--allow-http" in r.stderr

    r = run("prices", "pull", "--allow-http", "--retries", "0", f"{base}/gone.csv")
    assert r.returncode == 1
    assert "HTTP 404" in r.stderr and "previous data kept" in r.stderr

    (root / "bad.csv").write_text("gpu,usd_per_hour\nh100-sxm,free\n")
    r = run("prices", "pull", "--allow-http", f"{base}/bad.csv")
    assert r.returncode == 2
    assert "bad.csv" in r.stderr and "line 2" in r.stderr and "'free'" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert cached.read_bytes() == before


def test_catalog_pull_adds_without_removing(files, run: Run, advisor_home: Path) -> None:
    root, base = files
    before = json.loads(run("catalog", "list", "--json").stdout)["gpus"]
    h100 = next(g for g in before if g["id"] == "h100-sxm")
    # the listing's default_price is the price sheet's, not a field of a catalog entry
    team = {**{k: v for k, v in h100.items() if k != "default_price"},
            "id": "team-h100", "name": "Team H100", "aliases": []}
    (root / "team.json").write_text(json.dumps({"gpu": [team]}))
    r = run("catalog", "pull", "--allow-http", f"{base}/team.json")
    assert r.returncode == 0, r.stderr
    after = json.loads(run("catalog", "list", "--json").stdout)["gpus"]
    assert len(after) == len(before) + 1 and any(g["id"] == "team-h100" for g in after)

    (advisor_home / "pulled" / "catalog.json").write_text("{not json")
    r = run("catalog", "list")
    assert r.returncode == 2 and "catalog.json" in r.stderr and "not valid JSON" in r.stderr
