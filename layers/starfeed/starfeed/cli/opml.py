"""starfeed opml import: every feed of an OPML file, its folders as collections."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from starfeed import subscribe
from starfeed.cli.common import CliError, connect, count
from starfeed.subscribe import CHECKS_IN_FLIGHT, CHECKS_PER_HOST, Imported


def add_commands(commands) -> None:
    opml = commands.add_parser("opml", help="OPML import").add_subparsers(dest="verb", required=True)
    imp = opml.add_parser("import", help="subscribe to every feed in an OPML file, folders as collections",
                          description="Subscribe to every feed of an OPML file (any reader's export). "
                          "Its folders become collections (a folder path such as Tech/Python becomes "
                          "tech-python). Each feed is checked once first, as `source add` does: "
                          f"{CHECKS_IN_FLIGHT} at a time, {CHECKS_PER_HOST} per host (500 feeds that answer within "
                          "a second take about a minute); one that cannot be read is not subscribed. "
                          "--no-check subscribes every feed at once without fetching.")
    imp.add_argument("file")
    imp.add_argument("--backfill", type=count, default=0, metavar="N",
                     help="keep the newest N entries of each new source's first fetch")
    imp.add_argument("--no-check", action="store_true",
                     help="subscribe without fetching each feed first (fast; failures show later in "
                          "`source list`)")
    imp.set_defaults(action=_import)


def _import(args) -> None:
    """One progress line per feed, then what was added, what was there already, and what failed
    and why."""
    from starfeed.sources import BadSource, read_opml, subscribed

    try:
        document = read_opml(Path(args.file))
    except BadSource as exc:
        raise CliError(str(exc)) from None
    storage = connect(args.stack)
    feeds, total = document.feeds, len(document.feeds)
    if not total:
        print(f"{args.file} lists no feeds (no outline has an xmlUrl): nothing to import")
        return
    for folder, name in document.folders.items():
        print(f'folder "{folder}" becomes the collection {name}')
    logins = subscribe.logins_off(feeds)  # user:password@ in a URL: kept in the token store, never shown
    existing = subscribed(storage, [f.url for f in feeds])
    report = _Report(total)
    now = time.time()
    to_check = []
    for feed in feeds:
        outcome = subscribe.import_known(storage, feed, existing, args.backfill)
        if outcome:
            report.line(outcome)
        else:
            to_check.append(feed)
    for feed, inspection, error in subscribe.checked(to_check, storage, args.no_check, args.backfill, logins):
        if error:
            report.line(Imported("failed", f"{feed.url}: {subscribe.unsubscribed(error)}"))
            continue
        report.line(subscribe.import_new(storage, feed, inspection, now, args.backfill, logins.get(feed.url)))
    if report.counts["added"] or report.changed:
        subscribe.request_renders(storage, sorted(report.changed))
    report.finish(args, storage.settings)


class _Report:
    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.counts = {"added": 0, "already subscribed": 0, "skipped": 0, "failed": 0}
        self.failures: list[str] = []
        self.quiet = 0  # added sources whose first fetch keeps nothing
        self.changed: set[str] = set()  # render targets (collections an existing source joined)
        self.dropped: Counter = Counter()  # what the added sources' first fetches leave out, by reason

    def line(self, imported: Imported) -> None:
        self.done += 1
        self.counts[imported.outcome] += 1
        self.quiet += imported.quiet
        self.changed.update(imported.targets)
        self.dropped.update(imported.dropped)
        if imported.outcome == "failed":
            self.failures.append(imported.text)
        width = len(str(self.total))
        print(f"[{self.done:>{width}}/{self.total}] {imported.outcome}: {imported.text}", flush=True)

    def finish(self, args, settings) -> None:
        counts = ", ".join(f"{n} {what}" for what, n in self.counts.items() if n or what == "added")
        print(f"imported {args.file}: {counts}")
        if self.failures:
            print("not subscribed: fix those URLs, or run the import again with --no-check to "
                  "subscribe them anyway (the fetcher retries them on their schedules)")
        if self.dropped:
            from starfeed.inspect import rule_of

            left_out = ", ".join(f"{n:,} {reason}" + (f" ({rule_of(reason)})" if rule_of(reason) else "")
                                 for reason, n in self.dropped.most_common())
            quiet = f"{self.quiet} of the {self.counts['added']} added show nothing until they publish " \
                    "again; " if self.quiet else ""
            print(f"{quiet}their first fetches leave out entries: {left_out}; "
                  + (f"--backfill {args.backfill} keeps the newest {args.backfill} of each" if args.backfill
                     else "--backfill N keeps the newest N of each new source"))
        if self.counts["added"]:
            print(f"their first fetches are spread over the next {settings.startup_jitter} s")
