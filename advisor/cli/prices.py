"""`advisor prices pull URL`: take the team's price sheet as the default prices.

The pull options and the shared runner live here too, since `advisor catalog pull`
behaves the same way and should say things the same way.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from advisor.cli import COMMANDS
from advisor.core import MAX_RETRIES, MAX_TIMEOUT_S, InputError, clean_block

if TYPE_CHECKING:
    from advisor.io.catalog_store import PullKind

FORMATS = ("toml", "json", "csv")
"""advisor.core's FORMATS, spelled out: reading that name loads advisor.core.formats with
pydantic and tomlkit, and `advisor --help` imports nothing but advisor and the standard
library (a unit test keeps the two equal)."""

EXIT_FETCH_FAILED = 1  # the network or the server failed; 2 is kept for bad content

PRICE_SHEET_HELP = """\
A price sheet is CSV with the header gpu,usd_per_hour,label,source,retrieved
(gpu and usd_per_hour required; several sources separated by ';'; retrieved is
YYYY-MM-DD, the day of the pull by default), or TOML/JSON [[price]] entries with
the same fields. gpu is a catalog id or a name matching one GPU. One row per GPU;
each becomes that GPU's default price, with the sheet's URL as its source. Your own
quotes in answers.toml still win.
"""

PULL_HELP = """\
The document is fetched over https (plain http only with --allow-http), with
timeouts, retries with capped backoff and a size cap. A URL with user:password in
it is refused; every secret part (a value whose key names a credential, a token, a
signed link's signature, a session id) is redacted from everything printed, cached or
cited, and the sheet is known by a keyed hash of the full URL. It is merged over the shipped
catalog and validated before the cache in the advisor data folder
($ADVISOR_HOME, else the platform's: ~/.local/share/advisor or $XDG_DATA_HOME/advisor
on Linux, ~/Library/Application Support/advisor on macOS) is replaced; a failed or
invalid pull keeps the previous data. Pulling the same URL again sends its ETag
and Last-Modified, so an unchanged document is not downloaded twice. Offline,
advisor uses the cache and never the network.

Exit codes: 1 when the download failed, 2 when the URL or document is invalid.
"""


def add_pull_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", help="https URL of a TOML, JSON or CSV document")
    p.add_argument("--allow-http", action="store_true", help="accept a plain http URL")
    p.add_argument("--format", choices=FORMATS,
                   help="document format (default: from the URL suffix or Content-Type)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="S",
                   help="the longest one attempt may take, connect to last byte, in seconds "
                        f"(default 10, at most {MAX_TIMEOUT_S:g})")
    p.add_argument("--retries", type=int, default=2, metavar="N",
                   help="extra attempts after a timeout, dropped connection or 5xx "
                        f"(default 2, at most {MAX_RETRIES}; waits between them are capped)")


def run_pull(kind: PullKind, args: argparse.Namespace) -> int:
    from advisor.io.fetch import FetchError, FetchPolicy
    from advisor.io.sync import pull

    if not 0 < args.timeout <= MAX_TIMEOUT_S:  # refuses nan and inf too
        raise InputError(f"must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}",
                         field="--timeout", value=args.timeout)
    if not 0 <= args.retries <= MAX_RETRIES:
        raise InputError(f"must be 0 to {MAX_RETRIES}", field="--retries", value=args.retries)
    # --timeout bounds the whole attempt, so a server trickling bytes cannot stretch it
    policy = FetchPolicy(timeout_s=args.timeout, total_s=args.timeout, retries=args.retries,
                         allow_http=args.allow_http)
    try:
        outcome = pull(kind, args.url, policy, args.format)
    except FetchError as exc:
        print(f"advisor: error: {exc.one_line()}; previous data kept", file=sys.stderr)
        return EXIT_FETCH_FAILED
    print(clean_block(outcome.summary()))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "prices", help=COMMANDS["prices"])
    psub = p.add_subparsers(dest="prices_command", metavar="SUBCOMMAND", required=True)
    pl = psub.add_parser(
        "pull", help="fetch a team price sheet (CSV, TOML or JSON) and use it as defaults",
        description=PRICE_SHEET_HELP + "\n" + PULL_HELP,
    )
    add_pull_options(pl)
    pl.set_defaults(handler=lambda args: run_pull("prices", args))
