"""starfeed tap export: the entries and raw payloads of the taps, in their file layout (docs/design.md#ndjson-taps)."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from starfeed.cli.common import connect


def add_commands(commands) -> None:
    tap = commands.add_parser("tap", help="the NDJSON taps of new entries").add_subparsers(dest="verb", required=True)
    export = tap.add_parser("export", help="write DIR/entries/YYYY-MM-DD.ndjson and DIR/raw/YYYY-MM-DD/FETCH.blob",
                            description="Every entry first stored on DATE or later, one JSON object per line, "
                            "a file per day, and the raw bytes of the fetches that brought them.")
    export.add_argument("--since", required=True, type=_day, metavar="DATE", help="the first day, YYYY-MM-DD (UTC)")
    export.add_argument("directory", type=Path, metavar="DIR")
    export.set_defaults(action=_export)


def _day(value: str) -> str:
    try:
        return datetime.date.fromisoformat(value).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a day as YYYY-MM-DD") from None


def _export(args) -> None:
    from starfeed.taps import export

    done = export(connect(args.stack), args.since, args.directory)
    print(f"{args.directory}: {done.entries:,} entries in {done.days} day file(s) under entries/, "
          f"{done.raw:,} raw payloads under raw/")
