"""What every command group shares: the stack to talk to, errors in one line, and how times,
spans and long text are printed."""

from __future__ import annotations

import argparse

from starfeed import deployment
from starfeed.fetch.options import Asked
from starfeed.model import Selectors
from starfeed.store import Storage


class CliError(Exception):
    pass


def connect(stack_name: str | None) -> Storage:
    try:
        return deployment.connect(stack_name)
    except deployment.NoStack as exc:
        raise CliError(str(exc)) from None
    except Exception as exc:  # one line: which stack, and why
        if not stack_name:
            raise
        raise CliError(f"cannot read the stack {stack_name}: {describe(exc)}") from None


SELECTOR_OPTIONS = (
    ("items", "the CSS selector of the page's items, one entry each"),
    ("title", "within an item, the CSS selector of its title"),
    ("link", "within an item, the CSS selector of its link: the element's href, else the first link inside it"),
    ("date", "within an item, the CSS selector of its date (a <time>'s datetime, else the text; a date not "
             "understood leaves the entry undated)"),
    ("summary", "within an item, the CSS selector of its summary"))


def add_selector_options(parser: argparse.ArgumentParser, description: str) -> None:
    """--items, --title, --link, --date and --summary: a page without a feed read by CSS selectors
    (docs/design.md#selectors)."""
    group = parser.add_argument_group("a page without a feed, read by CSS selectors", description)
    for role, text in SELECTOR_OPTIONS:
        group.add_argument(f"--{role}", metavar="SEL", help=text)


def selectors_of(args: argparse.Namespace) -> Selectors | None:
    """The selectors given (None: none); one missing is for the caller to refuse, with the reason."""
    if all(getattr(args, role) is None for role, _ in SELECTOR_OPTIONS):
        return None
    return Selectors(items=args.items or "", title=args.title or "", link=args.link or "",
                     date=args.date or None, summary=args.summary or None)


def add_request_options(parser: argparse.ArgumentParser, description: str, clearing: bool = False) -> None:
    """--header, --user-agent, --cookie, --proxy (and, to change them, --no-proxy): how a source is
    asked for (docs/design.md#request-options)."""
    group = parser.add_argument_group("request options", description)
    group.add_argument("--header", action="append", metavar="'NAME: VALUE'",
                       help="a header sent with each request (repeatable); credentials (Authorization, any name "
                            "with token, key, auth or session) are kept in the token store and sent to the "
                            "source's own origin only" + ("; --header '' removes them all" if clearing else ""))
    group.add_argument("--user-agent", metavar="UA", help="instead of starfeed's own"
                       + ("; an empty one gives starfeed's back" if clearing else ""))
    group.add_argument("--cookie", action="append", metavar="'NAME=VALUE'",
                       help="a cookie sent with each request to the source's own origin (repeatable), kept in "
                            "the token store" + ("; --cookie '' removes them all" if clearing else ""))
    group.add_argument("--proxy", metavar="URL", help="fetch it through this proxy: http://, https://, socks5:// "
                       "or socks5h://[USER:PASSWORD@]HOST:PORT (its credentials kept in the token store)")
    if clearing:
        group.add_argument("--no-proxy", action="store_true", help="no proxy of its own (STARFEED_PROXY, if set)")


def asked_of(args: argparse.Namespace) -> Asked:
    return Asked(headers=args.header, user_agent=args.user_agent, cookies=args.cookie, proxy=args.proxy,
                 no_proxy=getattr(args, "no_proxy", False))


def describe(exc: Exception) -> str:
    """An unexpected failure in one line: AWS's own words where it spoke, else the exception's."""
    cause = getattr(exc, "cause", None) or exc.__cause__ or exc  # PynamoDB wraps botocore's errors
    name = type(cause).__name__
    text = " ".join(str(cause).split())[:300]
    if name in ("EndpointConnectionError", "ConnectionClosedError", "ConnectTimeoutError"):
        return (f"cannot reach the stack's AWS endpoint ({text}): is `make run` still running? "
                "For a deployed stack, check --stack NAME and your network")
    if name in ("NoCredentialsError", "PartialCredentialsError"):
        return "no AWS credentials: configure them (aws configure, AWS_PROFILE) to manage a deployed stack"
    if name == "ClientError" or "ResourceNotFound" in text:
        return f"AWS refused the request: {text}; check --stack NAME and your AWS credentials"
    return f"unexpected {name}: {text} (STARFEED_DEBUG=1 shows where)"


def count(text: str) -> int:
    """An argparse type: a number of entries, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"a number of entries, 0 or more: {text!r}")
    return value


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def ago(epoch: float | None, now: float) -> str:
    return "never" if epoch is None else span(now - epoch) + " ago"


def until(epoch: float | None, now: float) -> str:
    if epoch is None:
        return "not scheduled"
    return "due now" if epoch <= now else "in " + span(epoch - now)


def span(seconds: float) -> str:
    seconds = int(max(0, seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
