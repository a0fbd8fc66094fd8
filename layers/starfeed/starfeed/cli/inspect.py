"""starfeed inspect: fetch and parse a feed as the fetcher would, storing nothing."""

from __future__ import annotations

import sys

from starfeed.cli.common import (
    CliError,
    add_request_options,
    add_selector_options,
    asked_of,
    clip,
    connect,
    count,
    selectors_of,
)
from starfeed.deployment import fetch_settings


def add_commands(commands) -> None:
    inspect = commands.add_parser("inspect", help="fetch and parse a feed as the fetcher would, "
                                  "storing nothing")
    inspect.add_argument("target", metavar="URL|FILE")
    inspect.add_argument("--json", action="store_true",
                         help="one JSON object per entry on stdout; the summary on stderr")
    inspect.add_argument("--website", action="store_true", help="read it as a website source")
    inspect.add_argument("--all", action="store_true",
                         help="every parsed entry, without the filters a new source applies")
    inspect.add_argument("--backfill", type=count, default=0, metavar="N",
                         help="as for a new source added with --backfill N")
    add_selector_options(inspect, "Read the page as `source add URL --items SEL ...` would, to try the "
                         "selectors before subscribing, where its robots.txt allows: the items a new "
                         "subscription keeps are listed, and how many it leaves out and why (--all lists "
                         "every item they find).")
    add_request_options(inspect, "Fetch it as `source add URL` with these options would, to try them before "
                        "subscribing.")
    inspect.set_defaults(action=_inspect)


def _proxy_login(stack_name: str | None) -> object:
    """STARFEED_PROXY's login from the stack's token store; None without a stack to read it from."""
    try:
        storage = connect(stack_name)
    except CliError:
        return None
    return storage.secrets.proxy_login()


def _inspect(args) -> int:
    from starfeed.fetch.http import asking
    from starfeed.fetch.options import OptionError, apply, described, with_login
    from starfeed.inspect import entry_lines, failure_lines, inspect, summary_lines

    selectors = selectors_of(args)
    if selectors is not None and args.website:
        raise CliError("--website reads a page's main article, --items its list: give one or the other")
    settings = fetch_settings(args.stack)
    asked = asked_of(args)
    if "://" in args.target:  # its user:password@ is sent as a subscription's would be, and never printed
        args.target, asked = with_login(args.target, asked)
    try:
        options, secrets = apply(asked, None, None)
        ask = asking(options, secrets, settings, lambda: _proxy_login(args.stack))
    except OptionError as exc:
        raise CliError(str(exc)) from None
    inspection = inspect(args.target, settings, website=args.website, unfiltered=args.all, backfill=args.backfill,
                         selectors=selectors, ask=ask)
    if asked := described(options, settings.proxy):
        print(f"asked:    with {asked}", file=sys.stderr)
    if inspection.error:
        print(f"starfeed: {args.target}: {inspection.error}", file=sys.stderr)
        for line in failure_lines(inspection):
            print(line, file=sys.stderr)
        return 1
    if args.json:
        for line in entry_lines(inspection):
            print(line)
    else:
        for entry in inspection.ingested.entries:
            print(f"{entry.sort_time}  {clip(entry.title or '(untitled)', 60)}  {entry.canonical_link or ''}")
    for line in summary_lines(inspection):
        print(line, file=sys.stderr)
    return 0
