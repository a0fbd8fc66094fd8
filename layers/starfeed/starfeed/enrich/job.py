"""The enricher's work for one entry of a deframed source (docs/design.md#deframe-pipeline): download the article
through the fetcher's HTTP path (SSRF rules, limits, our User-Agent) where the host's robots.txt
allows it, keep its raw bytes, extract its main text, analyze it within the day's budget, store
the result on the entry, and name the feeds to render again.

A failed download is not a failed entry: the analyzer then reads the feed's own content, and the
result says so (input "feed", download_error)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from starfeed import observe
from starfeed.enrich.analysis import AnalysisRequest, Analyzer, AnalyzerError, Prompt, prompt_for
from starfeed.fetch import robots
from starfeed.fetch.entries import rejudge
from starfeed.fetch.http import fetch
from starfeed.fetch.record import store_raw
from starfeed.kinds.registry import kind_of
from starfeed.model import Entry, Source
from starfeed.parse.html import extract_article, looks_like_html
from starfeed.parse.normalize import rfc3339
from starfeed.parse.text import text_of
from starfeed.settings import Settings
from starfeed.store import Storage
from starfeed.urlpolicy import redact

log = logging.getLogger(__name__)
MIN_ARTICLE_CHARS = 200  # less than this is a teaser or a wall, not the article


class OverBudget(Exception):
    """Today's analyzer calls or tokens are spent: the entry waits for the next UTC day."""


class NotStoredYet(Exception):
    """The message came before its entry's write was done: retried, dead-lettered if it never is."""


class HostBusy(Exception):
    """The article's host asks for a delay between requests (robots.txt's Crawl-delay) and its turn
    is another request's: the entry waits for the turn, `until` (docs/design.md#crawl-delay)."""

    def __init__(self, until: float, reason: str):
        super().__init__(reason)
        self.until = until


@dataclass(frozen=True)
class EnrichMessage:
    feed_id: str
    entry_uid: str


def analyzer_from(settings: Settings) -> Analyzer:
    """STARFEED_ANALYZER: "mock" or "bedrock" (Converse on STARFEED_BEDROCK_MODEL_ID)."""
    if settings.analyzer == "mock":
        from starfeed.enrich.mock import MockAnalyzer

        return MockAnalyzer(settings.analyzer_latency_ms)
    if settings.analyzer == "bedrock":
        from starfeed.enrich.bedrock import BedrockAnalyzer

        return BedrockAnalyzer(settings.bedrock_model_id, settings.region)
    raise ValueError(f"STARFEED_ANALYZER={settings.analyzer!r}: use mock or bedrock")


@dataclass
class Known:
    """What one enricher instance has read already: a batch's sources (a feed's new entries
    arrive together) and each host's robots.txt, until it expires."""

    sources: dict[str, Source | None] = field(default_factory=dict)
    robots: dict[str, dict] = field(default_factory=dict)


def enrich(storage: Storage, analyzer: Analyzer, message: EnrichMessage, now: float,
           known: Known | None = None, wait_for_turn: bool = True) -> list[str]:
    """The feeds to render again once the entry is analyzed; [] when there is nothing to do (the
    source is gone, removed, disabled or no longer deframed; the entry has expired). Raises
    OverBudget, or AnalyzerError (recorded on the source) for the message to be retried; HostBusy
    when the article's host's crawl-delay turn is another request's, unless not wait_for_turn:
    then the feed's own content is analyzed, and the result says why."""
    known = known or Known()
    if message.feed_id not in known.sources:
        known.sources[message.feed_id] = storage.sources.get(message.feed_id)
    source = known.sources[message.feed_id]
    if source is None or not source.live or not source.deframe:
        log.info("enricher: %s is gone, disabled or not deframed; %s skipped", message.feed_id, message.entry_uid)
        return []
    entry = storage.analyses.entry(message.feed_id, message.entry_uid)
    if entry is None:  # queued before it was written: the fetch is writing it, or failed and retries
        raise NotStoredYet(f"{message.feed_id}/{message.entry_uid} is not stored (yet)")
    prompt = prompt_for(source.prompt)
    if (entry.analyzer_result or {}).get("prompt_version") == prompt.version:
        return kind_of(source).targets(source)  # a redelivered message: analyzed already, its render may be lost
    request = request_for(storage, source, entry, prompt, now, known.robots, wait_for_turn)
    # Counted when the call is sure to be made: a download that fails costs no budget.
    if not storage.analyses.reserve(now):
        raise OverBudget(f"today's budget is spent ({storage.settings.analyzer_daily_calls} calls, "
                         f"{storage.settings.analyzer_daily_tokens} tokens)")
    try:
        observe.metric(observe.ANALYZER_CALLS, 1)
        with observe.span("analyze", source_id=source.source_id):
            analysis = analyzer.analyze(request)
    except AnalyzerError as exc:
        storage.analyses.spend(now, exc.tokens)  # a malformed answer was paid for all the same
        source.analysis_error = f"{rfc3339(now)}: {exc}"[:500]
        storage.analyses.note_error(source.source_id, source.analysis_error)
        raise
    result = analysis.result(request, rfc3339(now))
    storage.analyses.spend(now, result.tokens)
    storage.analyses.store(entry, result.to_dict(), source.collections)
    if source.analysis_error:
        source.analysis_error = None
        storage.analyses.note_error(source.source_id, None)
    log.info("enricher: %s analyzed from its %s (score %.2f, %d tokens)",
             redact(entry.canonical_link or entry.entry_uid), request.used, result.score, result.tokens)
    # Rules on the score judge it now that it has one.
    return kind_of(source).targets(source) + rejudge(storage, replace(entry, analyzer_result=result.to_dict()),
                                                      source, now)


def request_for(storage: Storage, source: Source, entry: Entry, prompt: Prompt, now: float,
                robots_known: dict[str, dict], wait_for_turn: bool = True) -> AnalysisRequest:
    """The article's main text when it can be had, else the feed's own content and why not."""
    settings = storage.settings
    title = entry.title or ""
    text, why = article_text(storage, source, entry, now, robots_known, wait_for_turn)
    if text is not None:
        return AnalysisRequest(title, text[:settings.analyzer_input_chars], entry.canonical_link, prompt, "article")
    feed_text = text_of(entry.content) or text_of(entry.summary) or title
    return AnalysisRequest(title, feed_text[:settings.analyzer_input_chars], entry.canonical_link, prompt,
                           "feed", why)


def article_text(storage: Storage, source: Source, entry: Entry, now: float,
                 robots_known: dict[str, dict], wait_for_turn: bool = True) -> tuple[str | None, str | None]:
    """(the article's main text, None), or (None, why it could not be had). A host that asks for
    a delay between requests is asked only on its turn, as the fetcher asks it (robots.turn)."""
    link = entry.canonical_link
    if not link:
        return None, "the entry has no link"
    allowed = robots.check(storage, link, now, robots_known)
    if not allowed.allowed:
        return None, allowed.reason
    if (free_at := robots.turn(storage, link, allowed, now)) is not None:
        why = f"{robots.crawl_delay_words(allowed.crawl_delay or 0, link)}, and its turn was another request's"
        if wait_for_turn:
            raise HostBusy(free_at, why)
        return None, why
    result = fetch(link, storage.settings)
    if result.status is not None:
        store_raw(storage, source, result, now)  # kept before it is read, as every fetch
    elif result.error:
        # No answer: the reason's head only. The result is public, and the link came from the
        # feed: the SSRF guard's detail (what a name resolves to) stays in the log.
        log.info("enricher: %s not downloaded: %s", redact(link), result.error)
        return None, result.error.split(":", 1)[0] + (
            ": the link is not a public http(s) address" if result.error.startswith("refused") else "")
    if result.error:
        return None, result.error
    if not looks_like_html(result.body, result.headers.get("Content-Type")):
        return None, f"not an HTML page ({result.headers.get('Content-Type') or 'no content type'})"
    try:
        article = extract_article(result.body, result.url)
    except Exception as exc:  # noqa: BLE001 - a page no parser expected: the feed's content serves
        log.warning("enricher: %s could not be read: %s", redact(link), exc)
        return None, f"the page could not be read ({type(exc).__name__})"
    if article is None or len(article.text) < MIN_ARTICLE_CHARS:
        return None, "no article text found on the page"
    return article.text, None
