"""What the REST API reads and answers, as pydantic models: its OpenAPI document's schemas."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from starfeed.formats import FORMATS

PAGE_LIMIT = 200  # entries or feeds on one page, at most


class Validators(BaseModel):
    etag: str | None
    last_modified: str | None


class Schedule(BaseModel):
    polling: bool
    interval_sec: int
    min_interval_sec: int | None
    max_interval_sec: int | None
    next_check_at: str | None = Field(description="RFC 3339; null when not fetched (disabled or removed)")
    reason: str | None = Field(description="why the scheduler chose the interval")


class Stats(BaseModel):
    last_fetch_at: str | None
    last_success_at: str | None
    consecutive_failures: int
    ewma_interarrival_sec: int | None
    entry_count: int = Field(description="entries stored, ever")
    dropped_last_fetch: dict[str, int] = Field(description="entries the last fetch's filters left out, by reason")


# A feed's file in each format (formats.py: rss, atom, json_feed), then its entries in this API.
FeedLinks = create_model("FeedLinks", **{f.link_name: (str, ...) for f in FORMATS},  # type: ignore[call-overload]  # fields unpacked from the registry match no overload
                         entries=(str, ...))


class Feed(BaseModel):
    id: str
    url: str
    kind: str
    title: str | None
    site_url: str | None
    collections: list[str]
    state: str = Field(description="ok, not-modified, new, error, dead, gone, disabled or removed")
    enabled: bool
    removed_at: str | None
    deframe: bool
    root_domain: str | None
    created_at: str
    http_status: int | None
    last_error: str | None = Field(description="the last fetch's failure in full, in words a user can act on")
    failure_class: str | None = Field(description="what the last fetch's failure was: blocked (bot protection), "
                                      "rate-limited, credentials, gone, dns, tls, timeout, network, robots, 4xx, "
                                      "5xx, not-a-feed, content, options (its request options cannot be used) "
                                      "or starfeed (a stage of its own); null when it succeeded")
    failure_words: str | None = Field(description="that failure in a few words, the vendor of a bot protection named: "
                                "\"blocked by bot protection (Cloudflare)\", \"rate-limited by the site\", "
                                "\"timed out\"; null when it succeeded")
    validators: Validators
    schedule: Schedule
    stats: Stats
    links: FeedLinks  # type: ignore[valid-type]  # a model made at run time is a value to mypy, not a type
    history: History | None = Field(description="the walk of its archive (RFC 5005), when one was asked for")
    request: RequestOptionsView | None = Field(default=None, description="its own request options "
                                               "(`source add --header ... --cookie ... --proxy ...`); null: none")
    proxy: str | None = Field(default=None, description="the proxy its requests go through, without credentials: "
                              "its own, else STARFEED_PROXY's; null: none")
    selectors: PageSelectors | None = Field(default=None, description="a page read by selectors: how it is read")


class FeedPage(BaseModel):
    feeds: list[Feed]
    next: str | None = Field(description="the next page's URL (also a Link rel=next header); null on the last")


class PageSelectors(BaseModel):
    """A page without a feed, read by CSS selectors (`source add URL --items SEL --title SEL --link SEL
    [--date SEL] [--summary SEL]`): each item the items selector finds is an entry."""

    model_config = ConfigDict(extra="forbid")
    items: str = Field(min_length=1, description="CSS selector of the page's items, each an entry")
    title: str = Field(min_length=1, description="CSS selector of an item's title, within the item")
    link: str = Field(min_length=1, description="CSS selector of an item's link (its href), within the item")
    date: str | None = Field(default=None, description="CSS selector of an item's date, within the item")
    summary: str | None = Field(default=None, description="CSS selector of an item's summary, within the item")


class NewFeed(BaseModel):
    """`starfeed source add`'s options."""

    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=1, max_length=2048, description="a feed, or an HTML page announcing one")
    collections: list[str] = Field(default=[], max_length=20)
    backfill: int = Field(default=0, ge=0, le=1000, description="keep the newest N entries of the first fetch")
    website: bool = Field(default=False, description="follow the page's main article instead of a feed")
    selectors: PageSelectors | None = Field(default=None, description="read a page without a feed by these "
                                            "selectors: checked on the page first, as `source add` does, and "
                                            "refused (422) when one does not compile, is too long or complex, "
                                            "or finds nothing")
    pick: int | None = Field(default=None, ge=1, le=100, description="the Nth feed an HTML page announces")
    check: bool = Field(default=True, description="false: subscribe without fetching first")
    enforce_domain: bool = False
    no_root_domain: bool = False
    deframe: bool = False
    history: bool = Field(default=False, description="also import the feed's archive once (RFC 5005)")


class DiscoveredFeed(BaseModel):
    url: str
    kind: str
    title: str | None


class Subscribed(BaseModel):
    outcome: Literal["added", "already subscribed", "restored"]
    feed: Feed
    found: str | None = Field(description="what the check found: format, title, entries")
    first_fetch: str | None = Field(description="what the first fetch keeps, and why it leaves the rest out")
    discovered: list[DiscoveredFeed] = Field(description="the feeds the HTML page announced, if it was one")
    joined: list[str] = Field(description="a feed subscribed already: the collections it joined")
    not_applied: list[str] = Field(description="a feed subscribed already: the options it kept as they were, "
                                               "with how to change each")


class RequestOptionsView(BaseModel):
    headers: dict[str, str] = Field(description="the headers it sends, credentials' values as \"(redacted)\"")
    user_agent: str | None = Field(description="its own user agent; null: starfeed's")
    cookies: dict[str, str] = Field(description="the cookies it sends, by name; their values \"(redacted)\"")
    proxy: str | None = Field(description="its own proxy, without credentials")


class History(BaseModel):
    state: str = Field(description="queued, walking, done or stopped")
    documents: int
    entries: int
    reason: str | None


class Refetch(BaseModel):
    feed_id: str
    detail: str


class Author(BaseModel):
    name: str | None = None
    email: str | None = None
    uri: str | None = None


class Enclosure(BaseModel):
    url: str
    type: str | None = None
    length: int | None = None


class Entry(BaseModel):
    """A normalized entry, with what starfeed adds: its warnings, the analyzer's
    analyzer_result, and its links."""

    entry_uid: str
    feed_id: str
    canonical_link: str | None
    title: str | None
    summary: str | None
    content: str | None
    authors: list[Author]
    categories: list[str]
    enclosures: list[Enclosure]
    published: str | None
    updated: str | None
    first_seen: str
    last_seen: str
    seen_count: int
    raw_refs: list[dict[str, str]]
    content_hash: str
    warnings: list[str]
    analyzer_result: dict | None
    backfilled: bool = Field(description="imported from the feed's archive, not seen new")
    blocked_by: str | None = Field(default=None, description="the rule that holds it out of every served feed "
                                   "(GET /api/v1/rules); null: shown")
    tags: list[str] = Field(default=[], description="the categories rules added; feeds show them among its categories")
    rule_sets: list[str] = Field(default=[], description="the rule sets whose feeds (/r/{set}/feed) it is in")
    links: dict[str, str] = Field(description="self: this entry; feed: its feed; raw: its first fetch's payload")


class EntryPage(BaseModel):
    entries: list[Entry]
    next: str | None = Field(description="the next page's URL (also a Link rel=next header); null on the last")


class Problem(BaseModel):
    """RFC 9457 problem details."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    errors: list[dict] | None = Field(default=None, description="each invalid parameter: where, and why")
