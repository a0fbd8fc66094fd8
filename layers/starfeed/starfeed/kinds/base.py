"""The interface every kind of source implements. Its defaults are a feed's: a kind overrides
what differs."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, ClassVar

from starfeed.model import FetchOutcome, Source, Status
from starfeed.render import clean, targets_for
from starfeed.render.opml import Subscription
from starfeed.schedule.github import tier_of
from starfeed.settings import Settings

if TYPE_CHECKING:
    from starfeed.fetch.github import GitHub, Read
    from starfeed.parse.ingest import Ingested, Reader
    from starfeed.schedule.decide import Decision
    from starfeed.store import Storage


class SourceKind:
    name: ClassVar[str]  # as stored on the source (Source.kind)
    # Its entries are served: in a feed of its own, the aggregate and its collections. The GitHub
    # follow list and timeline publish nothing: they keep the accounts' sources going.
    publishes: ClassVar[bool] = True
    # Its posts count toward the population's pace (schedule/pace.py): news sources do; GitHub
    # accounts follow their own rule.
    paced: ClassVar[bool] = True
    # Its URL is a feed a reader could subscribe to itself, as shown (so attribution and the
    # subscriptions list point at it, not at starfeed's copy).
    subscribable: ClassVar[bool] = False
    # Where `source list` puts it: news sources first, then GitHub's helpers, then its accounts.
    list_group: ClassVar[int] = 0
    # A page crawled: fetched only where the host's robots.txt allows it, its Crawl-delay held (a
    # feed, by convention, is not).
    crawled: ClassVar[bool] = False
    # Fetched with a source's own request options and its proxy, or STARFEED_PROXY
    # (docs/design.md#request-options): what one HTTP document is read from.
    takes_request_options: ClassVar[bool] = False

    def fetch(self, storage: Storage, source: Source, before: Source, lease: float | None, now: float,
              rng: random.Random) -> FetchOutcome | None:
        """One leased fetch, its outcome and next check written back (fetch/job.py calls it); None
        when it was not made (its host's turn had not come): the source was moved to that turn."""
        raise NotImplementedError

    def take_push(self, storage: Storage, source: Source, fetch_id: str, now: float) -> FetchOutcome | None:
        """A document a WebSub hub pushed for it (fetch_id: its raw payload), taken as a fetched
        one is; None when there was nothing to take. Only a kind read from one document has any."""
        return None

    def targets(self, source: Source) -> list[str]:
        """The feeds its new entries appear in."""
        return targets_for(source) if self.publishes else []

    def published(self, source: Source) -> bool:
        """Its feed is built (listed in /opml.xml, the dashboard): enabled, fetched at least once."""
        return self.publishes and bool(source.enabled) and source.status != Status.NEW

    def label(self, source: Source) -> str:
        """What `source list` calls it: its title, else its URL without the scheme."""
        return source.title or source.url.split("://", 1)[-1]

    def tier(self, source: Source) -> str:
        """Its activity tier, as GitHub accounts are labelled: from its interval ("-" without one)."""
        return tier_of(source.interval / 60) if self.publishes and source.interval else "-"

    def site(self, source: Source) -> str | None:
        """Its site, for attribution: the link its document gives."""
        return source.site_url

    def subscription(self, source: Source, base: str) -> Subscription | None:
        """Its line in /subscriptions.opml (what a reader subscribes to for it), or None; base:
        this starfeed's public URL. By default its own URL, as public views show it (redacted)."""
        shown = clean.shown(source)
        return Subscription(shown.title, shown.url, source.site_url, list(source.collections))


class DocumentKind(SourceKind):
    """A kind read from one document fetched over HTTP (fetch/document.py): a feed, a web page."""

    # Its reader in parse/ingest.py, by name: the parsers (feedparser, lxml) load when a document
    # is read, not when the api asks a kind what it publishes.
    reader: ClassVar[str]
    takes_request_options: ClassVar[bool] = True

    def fetch(self, storage: Storage, source: Source, before: Source, lease: float | None, now: float,
              rng: random.Random) -> FetchOutcome | None:
        from starfeed.fetch.document import fetch_document  # the fetcher's code: not on the api's cold start

        return fetch_document(self, storage, source, before, lease, now, rng)

    def take_push(self, storage: Storage, source: Source, fetch_id: str, now: float) -> FetchOutcome | None:
        from starfeed.fetch.document import take_push

        return take_push(self, storage, source, fetch_id, now)

    def read(self, body: bytes, url: str, content_type: str | None, source: Source, now: float,
             settings: Settings, history: bool = False) -> Ingested:
        """The document's entries, as its reader reads them. history: an archive document's."""
        from starfeed.parse import ingest

        read: Reader = getattr(ingest, self.reader)
        return read(body, url, content_type, source, now, settings, history)


class GitHubKind(SourceKind):
    """A kind read from GitHub's API with the token (fetch/github_job.py runs its read)."""

    publishes = False
    paced = False  # GitHub accounts follow their own rule (schedule/github.py)
    list_group = 1

    def fetch(self, storage: Storage, source: Source, before: Source, lease: float | None, now: float,
              rng: random.Random) -> FetchOutcome:
        from starfeed.fetch.github_job import fetch_github  # the fetcher's code: not on the api's cold start

        return fetch_github(self, storage, source, before, lease, now, rng)

    def read(self, github: GitHub, storage: Storage, source: Source, now: float) -> Read:
        """Its resource read across its pages (nothing stored yet)."""
        raise NotImplementedError

    def keep(self, storage: Storage, source: Source, read: Read, before: Source, lease: float | None,
             now: float) -> int:
        """What a successful read found, stored (its raw pages are already); the new entries."""
        return 0

    def checked(self, source: Source, read: Read, new: int, now: float, settings: Settings) -> Decision:
        """Its next check after a successful read."""
        raise NotImplementedError

    def succeeded(self, source: Source, read: Read, decision: Decision) -> None:
        """What a read that stayed successful to the end leaves on the source (its validators)."""

    def failed(self, storage: Storage, source: Source, now: float) -> None:
        """What a read's first failure (after a success) changes beyond the source."""
