"""`starfeed inspect URL|FILE`: the fetcher's own code path (SSRF rules, limits, parse, normalize,
filters as for a new source) without storing anything. What a user runs first when asking
"why doesn't this feed show up?"."""

from __future__ import annotations

import json
import mimetypes
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from starfeed.fetch import robots
from starfeed.fetch.http import Asking, FetchResult, fetch
from starfeed.kinds.base import DocumentKind
from starfeed.kinds.registry import FEED, SELECTORS, WEBSITE
from starfeed.model import FailureClass, Selectors, Source, document_failure, source_id_for
from starfeed.parse.ingest import Ingested, ingest
from starfeed.parse.selected import selectors_problem
from starfeed.settings import Settings

FILE_TYPES = {".atom": "application/atom+xml", ".rss": "application/rss+xml",
              ".json": "application/feed+json", ".xml": "application/xml"}


@dataclass
class Inspection:
    target: str
    ingested: Ingested
    http_status: int | None = None
    fetch_seconds: float | None = None
    parse_seconds: float = 0.0
    bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    failure: FailureClass | None = None  # what the error was, in its class

    @property
    def error(self) -> str | None:
        return self.ingested.error

    @property
    def next_step(self) -> str | None:
        """What to try next, for a failure a user can work around."""
        return NEXT_STEPS.get(self.failure) if self.failure is not None else None


# What to try next, per failure: the options named are `source add`'s and `inspect`'s.
NEXT_STEPS = {
    FailureClass.BLOCKED: "try a browser's user agent (--user-agent), a cookie from a browser session (--cookie) "
                          "or a proxy (--proxy)",
    FailureClass.RATE_LIMITED: "a subscription waits an hour or as long as the site asks if longer, and longer at each "
                               "refusal; if it keeps refusing, "
                               "try a browser's user agent (--user-agent) or a proxy (--proxy)",
    FailureClass.CREDENTIALS: "a private feed's URL often carries its token (copy the feed's link from the site while "
                              "logged in); or give what the site asks for: a header such as --header "
                              "'Authorization: Bearer TOKEN', or a cookie from a logged-in browser session (--cookie); "
                              "a proxy that asks for a login takes it in --proxy http://user:password@host:port",
    FailureClass.GONE: "check the URL; `starfeed inspect` of the site's home page names the feeds it announces",
    FailureClass.DNS: "check the host name for a typo: the site may also have moved to another domain",
    FailureClass.TLS: "the site's certificate does not hold for this name (expired, self-signed or another host's): "
                      "check the URL, or tell the publisher",
    FailureClass.TIMEOUT: "the site is slow or sends its answer a trickle at a time: try again later, or a proxy "
                          "(--proxy) if it slows down only starfeed",
    FailureClass.ROBOTS: "the site asks crawlers to keep off this page: subscribe to its feed instead",
    FailureClass.OPTIONS: "give its options again: `starfeed source set ID --header ... --cookie ... --proxy ...`",
    FailureClass.NOT_A_FEED: "subscribe to the feed the page names (`starfeed source add` of the page takes it), or "
                             "add the page with --website to follow its article",
}


def failure_named(words: str) -> FailureClass | None:
    """The failure whose words start this text (a host pause's reason is the error that made it)."""
    return next((failure for failure in FailureClass if words.startswith(failure.words)), None)


def inspect(target: str, settings: Settings, *, website: bool = False, unfiltered: bool = False,
            now: float | None = None, backfill: int = 0, selectors: Selectors | None = None,
            ask: Asking | None = None) -> Inspection:
    """As for a new source; unfiltered keeps every parsed entry (no age or domain filters).
    backfill: the new source's --backfill, so the counts are those of its first fetch. A target
    without "://" is a file; a missing one is reported as such. selectors: a page read by them
    (selectors that cannot be used are refused before anything is fetched)."""
    now = time.time() if now is None else now
    if selectors is not None and (problem := selectors_problem(selectors, settings)):
        return Inspection(target, Ingested(error=problem))
    if target.startswith("file://"):
        target = unquote(urlsplit(target).path)
    if "://" not in target:
        return inspect_file(target, settings, website=website, unfiltered=unfiltered, now=now,
                            backfill=backfill, selectors=selectors)
    allowed = robots.RobotsAnswer(True)
    if _kind_of(website, selectors).crawled:  # as the fetcher asks a crawled page's host first
        allowed = robots.answer(robots.read(target, settings, now), target)
        if not allowed.allowed:
            return Inspection(target, Ingested(error=f"{FailureClass.ROBOTS.words}: {allowed.reason} (not fetched)"),
                              failure=FailureClass.ROBOTS)
    inspection = inspect_fetched(target, fetch(target, settings, ask=ask), settings, website=website,
                                 unfiltered=unfiltered, now=now, backfill=backfill, selectors=selectors)
    if allowed.crawl_delay:
        inspection.warnings.append(f"{robots.crawl_delay_words(allowed.crawl_delay, target)}: a subscription "
                                   "fetches the page no more often")
    return inspection


def inspect_file(target: str, settings: Settings, *, website: bool = False, unfiltered: bool = False,
                 now: float | None = None, backfill: int = 0, selectors: Selectors | None = None) -> Inspection:
    path = Path(target).expanduser()
    try:
        body = path.read_bytes()
    except FileNotFoundError:
        hint = f" (for a web address, write https://{target})" if _looks_like_a_host(target) else ""
        return Inspection(target, Ingested(error=f"no such file{hint}"))
    except IsADirectoryError:
        return Inspection(target, Ingested(error="a folder, not a feed file"))
    except OSError as exc:
        return Inspection(target, Ingested(error=f"cannot read this file: {exc.strerror or exc}"))
    content_type = FILE_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
    return _ingest(target, body, path.resolve().as_uri(), content_type, settings, website=website,
                   unfiltered=unfiltered, now=now, backfill=backfill, selectors=selectors)


def _looks_like_a_host(target: str) -> bool:
    """example.org/feed or example.org, not ./feed.xml or feed.xml."""
    if target.startswith((".", "/", "~")):
        return False
    first = target.split("/", 1)[0]
    return "." in first and ("/" in target or Path(first).suffix.lower() not in _FILE_SUFFIXES)


_FILE_SUFFIXES = {*FILE_TYPES, ".opml", ".txt", ".html", ".htm", ".rdf"}


def inspect_fetched(target: str, result: FetchResult, settings: Settings, *, website: bool = False,
                    unfiltered: bool = False, now: float | None = None, backfill: int = 0,
                    selectors: Selectors | None = None) -> Inspection:
    """What a fetch's response holds, as for a new source (the CLI fetches once to check a URL
    and to discover the feeds of an HTML page)."""
    if result.error:
        return Inspection(target, Ingested(error=result.error), result.status, result.elapsed,
                          bytes=len(result.body), failure=result.failure)
    if result.not_modified:
        return Inspection(target, Ingested(error="304 Not Modified to a request without validators"),
                          result.status, result.elapsed)
    warnings = [f"redirected to {result.url}"] if result.url != target else []
    inspection = _ingest(target, result.body, result.url, result.headers.get("Content-Type"), settings,
                         website=website, unfiltered=unfiltered, now=now, backfill=backfill, selectors=selectors)
    inspection.http_status, inspection.fetch_seconds = result.status, result.elapsed
    inspection.warnings[:0] = warnings
    return inspection


def _ingest(target: str, body: bytes, url: str, content_type: str | None, settings: Settings, *,
            website: bool, unfiltered: bool, now: float | None, backfill: int,
            selectors: Selectors | None = None) -> Inspection:
    now = time.time() if now is None else now
    # As for a new source: created now, never polled, with the default settings.
    kind = _kind_of(website, selectors)
    source = Source(source_id=source_id_for(target), url=url, created_at=now, kind=kind.name, backfill=backfill,
                    selectors=selectors)
    if unfiltered:
        source.created_at, source.last_success_at = 0.0, now
        settings = replace(settings, max_article_age_days=10 ** 6)
    started = time.process_time()
    ingested = ingest(kind.read, body, url, content_type, source, now, settings)
    return Inspection(target, ingested, None, None, time.process_time() - started,
                      len(body), list(ingested.warnings), document_failure(ingested.error) if ingested.error else None)


def _kind_of(website: bool, selectors: Selectors | None) -> DocumentKind:
    return SELECTORS if selectors else WEBSITE if website else FEED


def entry_lines(inspection: Inspection) -> list[str]:
    return [json.dumps(asdict(e), ensure_ascii=False) for e in inspection.ingested.entries]


def failure_lines(inspection: Inspection) -> list[str]:
    """A failed inspection's lines after its error, for a failure a user can work around: the
    answer, the failure's class, what to try next (none for another: its error says it all)."""
    if not inspection.next_step:
        return []
    lines = []
    if inspection.http_status is not None:
        lines.append(f"http:     {inspection.http_status} in {inspection.fetch_seconds or 0:.2f} s, "
                     f"{inspection.bytes:,} bytes")
    lines.append(f"failure:  {inspection.failure}")
    lines.append(f"next:     {inspection.next_step}")
    return lines


def summary_lines(inspection: Inspection) -> list[str]:
    ingested = inspection.ingested
    lines = [f"source:   {inspection.target}"]
    if inspection.http_status is not None:
        lines.append(f"http:     {inspection.http_status} in {inspection.fetch_seconds:.2f} s, "
                     f"{inspection.bytes} bytes")
    lines.append(f"format:   {ingested.format or '-'}" + (f" ({ingested.title})" if ingested.title else ""))
    lines.append(f"entries:  {len(ingested.entries)} kept of {ingested.parsed_count} parsed"
                 f" in {inspection.parse_seconds * 1000:.1f} ms CPU")
    for reason, count in ingested.dropped.items():
        rule = rule_of(reason)
        lines.append(f"dropped:  {count} {reason}" + (f", left out by {rule}" if rule else ""))
    if ingested.parsed_count and not ingested.entries:
        lines.append("note:     a new subscription would show none of these yet (--backfill N keeps "
                     "the newest N); --all prints every parsed entry")
    elif ingested.dropped:
        lines.append("note:     the entries listed are those a new subscription keeps (--backfill N keeps the "
                     "newest N); --all prints every parsed entry")
    for warning in inspection.warnings:
        lines.append(f"warning:  {warning}")
    return lines


FORMAT_NAMES = {"rss20": "RSS 2.0", "rss10": "RSS 1.0", "rss090": "RSS 0.90", "rss091u": "RSS 0.91",
                "rss091n": "RSS 0.91", "rss092": "RSS 0.92", "rss093": "RSS 0.93", "rss094": "RSS 0.94",
                "atom10": "Atom 1.0", "atom03": "Atom 0.3", "json10": "JSON Feed 1.0",
                "json11": "JSON Feed 1.1", "cdf": "CDF", "html": "web page",
                "selectors": "web page read by selectors"}
# Which rule left an entry out, by the reason parse/filters.py gives.
_FILTERS = (("published before you subscribed", "the first-fetch filter"),
            ("older than", "the age filter"),
            ("undated", "a new subscription's limit on undated entries"),
            ("dated in the future", "a new subscription's limit on undated entries"),
            ("linking off", "--enforce-domain"))


def format_name(fmt: str | None) -> str:
    return FORMAT_NAMES.get(fmt or "", fmt or "an unknown format")


def found(inspection: Inspection) -> str:
    """What a check found, in a line: 'RSS 2.0 "Example", 37 entries'."""
    ingested = inspection.ingested
    title = f' "{ingested.title}"' if ingested.title else ""
    return f"{format_name(ingested.format)}{title}, {ingested.parsed_count} " \
           f"entr{'y' if ingested.parsed_count == 1 else 'ies'}"


def first_fetch(inspection: Inspection, backfill: int = 0) -> str:
    """What the first fetch of a new source keeps, and why it leaves the rest out."""
    ingested = inspection.ingested
    parsed, kept, dropped = ingested.parsed_count, len(ingested.entries), ingested.dropped
    if not parsed:
        return "no entries yet: new ones appear as they are published"
    entries = f"{parsed} entr{'y' if parsed == 1 else 'ies'}"
    backfilled = f"; --backfill {backfill} keeps the newest {backfill} whatever their dates" if backfill else ""
    if not dropped:
        return f"{entries}, {'all ' if kept > 1 else ''}{kept} shown after the first fetch{backfilled}"
    hint = backfilled or "; --backfill N keeps the newest N"
    by_filter = [(count, reason, rule_of(reason)) for reason, count in dropped.items() if count]
    if kept == 0 and [r for _, r, _ in by_filter] == ["published before you subscribed"]:
        they = "it stays" if parsed == 1 else "they stay"
        return (f"{entries}, 0 published since you subscribed: {they} out, as a new subscription keeps "
                f"only what is published after it{hint}")
    left_out = ", ".join(f"{count} {reason}" + (f" stay out by {rule}" if rule else " stay out")
                         for count, reason, rule in by_filter)
    return f"{entries}, {kept} shown after the first fetch: {left_out}{hint}"


def rule_of(reason: str) -> str | None:
    """The filter behind a dropped-entry reason: "the age filter", ... (docs/design.md#filters)."""
    return next((rule for key, rule in _FILTERS if reason.startswith(key)), None)


def kept_words(inspection: Inspection) -> str:
    """The first fetch in a few words, for one line of a list: "0 published since you
    subscribed", "2 shown (8 older than 7 days)", "all shown", "no entries yet"."""
    ingested = inspection.ingested
    parsed, kept, dropped = ingested.parsed_count, len(ingested.entries), ingested.dropped
    if not parsed:
        return "no entries yet"
    if not dropped:
        return "all shown" if kept > 1 else f"{kept} shown"
    if not kept and list(dropped) == ["published before you subscribed"]:
        return "0 published since you subscribed"
    return f"{kept} shown (" + ", ".join(f"{n} {reason}" for reason, n in dropped.items() if n) + ")"
