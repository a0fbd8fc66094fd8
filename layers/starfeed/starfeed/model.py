"""The records that flow through the pipeline. Plain dataclasses: no I/O, no AWS types."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeGuard
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import tldextract


def source_id_for(url: str) -> str:
    """A short, stable id: adding the same URL twice finds the same source."""
    return hashlib.sha256(url.strip().encode()).hexdigest()[:12]


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def host_key_of(url: str) -> str:
    """The host with its port when one is given: the unit of politeness (message groups, pauses).
    Two servers on one machine are two hosts; so are a GitHub simulation and a demo origin."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = (parts.hostname or "").lower()
    return f"{host}:{port}" if port else host


def root_domain_of(url: str) -> str:
    """The site key (docs/design.md#root-domain): the registrable domain under the Public Suffix List, private suffixes
    included, so alice.github.io and bob.github.io are two sites; a host the list does not know
    (an IP address, localhost) stands for itself."""
    host = host_of(url)
    return _public_suffixes()(host).top_domain_under_public_suffix or host


@functools.cache
def _public_suffixes() -> tldextract.TLDExtract:
    # tldextract's bundled snapshot of the list: no download at run time, no cache on disk.
    # Imported on first use: the functions that never derive a site key start without it.
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


class Policy(StrEnum):
    """What a failed fetch does to a source's schedule (docs/design.md#failure-policy)."""

    BACKOFF = "backoff"  # wait 2^failures times its interval, capped; the circuit breaker parks it
    ONE_STRIKE = "one-strike"  # parked at its first failure, until `source sync`


class FailureClass(StrEnum):
    """What a failed fetch was, in words a user can act on (`source list`, `starfeed status`, the
    REST API, `starfeed inspect`), and whose it was, as the FetchErrors metric counts it."""

    OURS = "starfeed"  # a stage of starfeed's broke: counted against its error budget
    BLOCKED = "blocked"  # bot protection answered: a challenge or block page (the vendor in the words)
    RATE_LIMITED = "rate-limited"  # 429, or a 403 that says a limit ran out
    CREDENTIALS = "credentials"  # 401, or 403 without a challenge
    GONE = "gone"  # 404, 410
    DNS = "dns"
    TLS = "tls"
    TIMEOUT = "timeout"  # no answer in time, or a response the fetch's deadline cut short
    NETWORK = "network"  # no answer: connection refused or reset
    ROBOTS = "robots"  # not asked: the site's robots.txt disallows it
    CLIENT = "4xx"  # another 4xx
    SERVER = "5xx"
    NOT_A_FEED = "not-a-feed"  # an HTML page, or a document in no feed format
    CONTENT = "content"  # another answer that is no usable document
    OPTIONS = "options"  # not asked: its request options cannot be used (a secret unreadable, a bad proxy)

    @property
    def words(self) -> str:
        """How a failure's words start: `last_error` is "<words>[ (<vendor>)]: <details>"."""
        return _FAILURE_WORDS[self]

    @property
    def metric(self) -> str:
        """Its FetchErrors dimension: the few a bill can afford (each dimension value is a metric),
        so the classes the publisher's side gave fold into 4xx, 5xx, network and content."""
        return _METRIC.get(self, self.value)

    @property
    def refusing(self) -> bool:
        """The site answers, but refuses starfeed for now: asking again soon only hammers it."""
        return self in (FailureClass.BLOCKED, FailureClass.RATE_LIMITED)


_FAILURE_WORDS = {
    FailureClass.OURS: "failed on starfeed's side", FailureClass.BLOCKED: "blocked by bot protection",
    FailureClass.RATE_LIMITED: "rate-limited by the site", FailureClass.CREDENTIALS: "needs credentials",
    FailureClass.GONE: "gone", FailureClass.DNS: "the name does not resolve",
    FailureClass.TLS: "TLS certificate refused", FailureClass.TIMEOUT: "timed out",
    FailureClass.NETWORK: "could not connect", FailureClass.ROBOTS: "refused by robots.txt",
    FailureClass.CLIENT: "refused by the server", FailureClass.SERVER: "server error",
    FailureClass.NOT_A_FEED: "not a feed", FailureClass.CONTENT: "not a usable document",
    FailureClass.OPTIONS: "unusable options",
}
_METRIC = {
    # robots.txt's refusal: the publisher's 403; options that cannot be used: the person's 4xx.
    **dict.fromkeys((FailureClass.BLOCKED, FailureClass.RATE_LIMITED, FailureClass.CREDENTIALS, FailureClass.GONE,
                     FailureClass.ROBOTS, FailureClass.OPTIONS), FailureClass.CLIENT.value),
    **dict.fromkeys((FailureClass.DNS, FailureClass.TLS, FailureClass.TIMEOUT), FailureClass.NETWORK.value),
    FailureClass.NOT_A_FEED: FailureClass.CONTENT.value,
}


def failure_class(http_status: int | None, refused: bool = False) -> FailureClass:
    """The class of a failure the publisher's side gave, by its status alone (a stage of ours has
    its own; fetch/headers.py refines an answer by its headers and body)."""
    if http_status is None:
        return FailureClass.ROBOTS if refused else FailureClass.NETWORK
    if http_status >= 500:
        return FailureClass.SERVER
    return {401: FailureClass.CREDENTIALS, 403: FailureClass.CREDENTIALS, 407: FailureClass.CREDENTIALS,
            404: FailureClass.GONE,
            410: FailureClass.GONE, 429: FailureClass.RATE_LIMITED}.get(
        http_status, FailureClass.CLIENT if http_status >= 400 else FailureClass.CONTENT)


def document_failure(error: str) -> FailureClass:
    """A document's failure by its words: "not a feed: ..." (an HTML page, no feed format), or
    another one no entry can be read from."""
    return FailureClass.NOT_A_FEED if error.startswith(FailureClass.NOT_A_FEED.words) else FailureClass.CONTENT


def failure_words(failure: object, error: str | None) -> str | None:
    """A failure named in a few words: its error's head when the error starts with its class's
    words (so a vendor named there is kept: "blocked by bot protection (Cloudflare)"), else the
    class's words; None for no failure (or a class edited by hand into none)."""
    if not isinstance(failure, FailureClass):
        return None
    if error and error.startswith(failure.words):
        return error.split(": ", 1)[0]
    return failure.words


class RuleAction(StrEnum):
    """What a rule does to the entries it matches (docs/design.md#rules)."""

    BLOCK = "block"  # left out of the served feeds, still stored
    KEEP = "keep"  # an allowlist: in its scope, an entry no keep rule matches is left out
    TAG = "tag"  # its tag added to the entry's categories


class RuleField(StrEnum):
    """What a rule's match looks at."""

    TITLE = "title"
    TEXT = "text"  # the summary and the content, as text
    AUTHOR = "author"
    LINK = "link"  # the entry's URL
    HOST = "host"  # its link's host
    CATEGORY = "category"
    SOURCE = "source"  # the source's id, title or URL
    AGE = "age"  # pattern: days; matches entries older than that
    SCORE = "score"  # pattern: a number from 0 to 1; matches entries the deframer scored above it


@dataclass(frozen=True)
class RuleMatch:
    """One condition: a field against words (case-insensitive, whole words) or a regular
    expression between slashes (/CVE-\\d+/), or a number for age and score; negated: it holds when
    the pattern does not match."""

    field: RuleField
    pattern: str
    negated: bool = False


@dataclass(frozen=True)
class Rule:
    """A rule as a person wrote it (rules/grammar.py checks and compiles it). scope: "global",
    "collection:NAME" or "source:ID", whose entries it judges; rule_set: a named set, served as a
    feed of its own (/r/SET/feed), whose rules judge nothing else."""

    rule_id: str
    action: RuleAction
    matches: tuple[RuleMatch, ...]
    any: bool = False  # any match suffices; else all must hold
    tag: str | None = None  # the category a tag rule adds
    scope: str = "global"
    rule_set: str | None = None
    created_at: str = ""


# The name of a collection, and of a rule set: both sit in URLs (/c/NAME/, /r/NAME/) and as keys
# of the collection entries table.
FEED_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def rule_set_partition(rule_set: str) -> str:
    """A rule set's entries sit in the collection entries table, under this key: a collection's
    name cannot hold a slash, so the two never meet."""
    return f"r/{rule_set}"


@dataclass(frozen=True)
class Verdict:
    """What the rules make of one entry: stored on it (Entry.blocked_by, tags, rule_sets)."""

    blocked_by: str | None = None
    tags: tuple[str, ...] = ()
    rule_sets: tuple[str, ...] = ()

    @classmethod
    def of(cls, entry: Entry) -> Verdict:
        return cls(entry.blocked_by, tuple(entry.tags), tuple(entry.rule_sets))


@dataclass(frozen=True)
class RuleSweep:
    """The re-evaluation of stored entries after the rules changed (rules/sweep.py), one page at
    a time: the rule book's version it judges by, where it stands, and what it found so far."""

    version: int = 0
    cursor: str = ""  # where the next page starts (the store's own key, as JSON); "" at the start
    done: bool = True
    judged: int = 0
    changed: int = 0
    started_at: str = ""
    finished_at: str = ""


class Status(StrEnum):
    """A source's last fetch, as `source list` and the dashboard show it."""

    NEW = "new"  # not fetched yet
    OK = "ok"
    NOT_MODIFIED = "not-modified"
    ERROR = "error"  # failing: retried with backoff
    DEAD = "dead"  # parked by the circuit breaker or one strike, until `source sync`
    GONE = "gone"  # 410: disabled


# The shapes of the records a source and an entry keep as JSON. Typed dicts: they are stored and
# read back as they are, so an item edited by hand is read as far as it can be (outcome_of).
class Push(TypedDict, total=False):
    """A WebSub subscription (websub/subscription.py); its secret is Source.push_secret."""

    hub: str
    topic: str
    token: str  # the callback's, unguessable
    state: str  # pending | verified | denied | failed | unsubscribing
    requested_at: float
    expires_at: float | None
    verified_at: float  # the lease granted is expires_at - verified_at
    reason: str | None
    renewing: bool


class HistoryWalk(TypedDict, total=False):
    """The walk of a source's archive (fetch/history.py)."""

    state: str  # queued | walking | done | stopped
    documents: int
    entries: int
    reason: str | None
    at: float
    started_at: float
    finished_at: float
    walked: list[str]  # the archive documents walked, as short digests


# One remembered fetch: its raw payload's id, when, the HTTP status, the outcome in words (left out
# when the status says it), the failure's class and the request's duration in ms.
FetchRecord = TypedDict("FetchRecord", {"fetch_id": str, "at": str, "status": int, "outcome": str, "class": str,
                                        "ms": int}, total=False)


class DecisionRecord(TypedDict):
    """One remembered scheduling decision: when, why, the interval before and after (seconds)."""

    at: str
    reason: str
    before: int
    after: int


UrlChange = TypedDict("UrlChange", {"from": str, "to": str, "at": str})  # a permanent redirect taken


class Author(TypedDict, total=False):
    name: str | None
    email: str | None
    uri: str | None


class Enclosure(TypedDict, total=False):
    url: str
    type: str | None
    length: int | None


class RawRef(TypedDict, total=False):
    fetch_id: str  # the raw payload an entry was read from (the raw route serves it)


# A remembered fetch's outcome when its status says it: left out of its record (fetch/record.py).
SUCCEEDED_BY_STATUS = {200: Status.OK.value, 304: Status.NOT_MODIFIED.value}


def outcome_of(fetch: dict[str, Any]) -> str:
    """A remembered fetch's outcome ("-" when nothing says it, as in a record edited by hand)."""
    if not isinstance(fetch, dict):
        return "-"
    status = fetch.get("status")
    return str(fetch.get("outcome") or (SUCCEEDED_BY_STATUS.get(status) if isinstance(status, int) else None) or "-")


# Fields a person sets (the CLI, the REST API) or that their own protocol writes as it changes (a
# WebSub subscription, which a hub may verify before the fetch that asked for it is written): a
# fetch's outcome never writes them (store/sources.py finish_fetch).
SET_BY_HAND = {"set_by": "hand"}


def by_hand(default: Any = None, *, factory: Callable[[], Any] | None = None) -> Any:
    """A Source field a fetch never writes (SET_BY_HAND)."""
    if factory is not None:
        return field(default_factory=factory, metadata=SET_BY_HAND)
    return field(default=default, metadata=SET_BY_HAND)


def set_by_hand(name: str) -> bool:
    return bool(Source.__dataclass_fields__[name].metadata.get("set_by") == "hand")


@dataclass
class GitHubAccount:
    """What a followed GitHub account's source knows of it (kind github-user)."""

    login: str = ""
    user_id: int | None = None
    last_starred_at: str | None = None  # RFC 3339: the newest star stored
    tier: str | None = None  # high | medium | low (docs/design.md#github-tiers)
    # When the timeline last made it due, and whether its latest new stars came by such a hint
    # (then its own poll may stretch to the safety net's).
    hinted_at: float | None = None
    timeline_covered: bool = False


@dataclass
class TimelineState:
    """The received-events timeline's reads (kind github-timeline)."""

    login: str | None = None  # the token's user, asked of GitHub at the first read
    read_at: float | None = None
    newest_id: int | None = None
    watch_ids: list[int] = field(default_factory=list)  # the star events read, newest first
    poll_interval: float | None = None  # GitHub's X-Poll-Interval, seconds
    hinted: int = 0  # stars it announced, ever
    last_hinted_at: float | None = None
    overflowed_at: float | None = None  # its last gap: more events between reads than GitHub keeps


@dataclass
class Selectors:
    """How a page without a feed is read (kind selectors): CSS selectors for its items, and,
    within each item, for its title, link and, if given, date and summary
    (docs/design.md#selectors)."""

    items: str = ""
    title: str = ""
    link: str = ""
    date: str | None = None
    summary: str | None = None


@dataclass
class RequestOptions:
    """How a source is asked for, as a person set it (`source add URL --header ... --cookie ...
    --proxy ...`, docs/design.md#request-options). Secret values are not here: the token store
    keeps them under `secret`; this names them."""

    headers: list[list[str]] = field(default_factory=list)  # [name, value]: headers that are no credential
    secret_headers: list[str] = field(default_factory=list)  # names of headers whose values are secret
    user_agent: str | None = None  # instead of starfeed's own
    cookies: list[str] = field(default_factory=list)  # names; their values are secret
    proxy: str | None = None  # scheme://host:port, without credentials
    proxy_credentials: bool = False  # its user and password are secret
    secret: str | None = None  # the token store's name for its secret values (a new one each change)

    @property
    def configured(self) -> bool:
        return bool(self.headers or self.secret_headers or self.user_agent or self.cookies or self.proxy)

    @property
    def has_secrets(self) -> bool:
        return bool(self.secret_headers or self.cookies or self.proxy_credentials)


@dataclass
class Source:
    source_id: str = field(metadata=SET_BY_HAND)
    url: str
    kind: str = by_hand("feed")  # a registered kind's name (starfeed.kinds)
    title: str | None = None
    site_url: str | None = None
    created_at: float = by_hand(0.0)
    enabled: bool = True  # a fetch may disable it (410 Gone); only a person enables it
    polling: bool = by_hand(True)
    collections: list[str] = by_hand(factory=list)
    root_domain: str | None = by_hand()  # the site key of /api/site; storage derives it from the URL
    # Drop items whose link leaves the feed's host. Off by default: link blogs, aggregators and
    # feed proxies rightly link elsewhere.
    enforce_feed_domain: bool = by_hand(False)
    # Keep the newest N entries of the first fetch whatever the new-subscription and age filters
    # say (`source add --backfill N`): a new subscription then starts with its history.
    backfill: int = by_hand(0)
    # Deframing: each new entry goes to the enricher, which stores an analyzer_result.
    deframe: bool = by_hand(False)
    prompt: str | None = by_hand()  # the analyzer's system prompt for this source; None: the default
    # The analyzer's last failure on one of its entries (cleared by its next success).
    analysis_error: str | None = None
    # Soft delete (`source remove`): never fetched or served until `source restore`.
    deleted_at: float | None = by_hand()
    # WebSub (websub/subscription.py): {hub, topic, token, state, requested_at, expires_at, reason,
    # renewing}; the secret apart, never shown.
    push: Push | None = by_hand()
    push_secret: str | None = by_hand()
    # The walk of its archive (fetch/history.py): {state, documents, entries, reason, at,
    # started_at, finished_at}; None when never asked for.
    history: HistoryWalk | None = None
    language: str | None = None  # as the feed declares it (RSS <language>, xml:lang, JSON Feed)
    # Conditional GET validators, and the SHA-256 of the last document stored and parsed, with
    # when: a 200 with the same bytes is not modified either (a server without validators answers
    # most polls so).
    etag: str | None = None
    last_modified: str | None = None
    body_sha256: str | None = None
    body_stored_at: float | None = None
    # Last fetch and its outcome.
    status: Status = Status.NEW
    http_status: int | None = None
    last_error: str | None = None
    failure: FailureClass | None = None  # the last error's class
    last_fetch_at: float | None = None
    last_success_at: float | None = None
    consecutive_failures: int = 0
    entry_count: int = 0  # entries stored, ever
    last_dropped: dict[str, int] = field(default_factory=dict)  # the last fetch's filters: reason -> count
    # The last fetches, newest first: {fetch_id, at, status, outcome, class, ms}, the keys with a
    # value (an outcome its status says left out: outcome_of).
    fetch_history: list[FetchRecord] = field(default_factory=list)
    # A permanent redirect is followed for good once it persists (settings.redirect_persistence).
    redirect_url: str | None = None
    redirect_count: int = 0
    url_changes: list[UrlChange] = field(default_factory=list)
    # Scheduling policy and state.
    policy: Policy = by_hand(Policy.BACKOFF)
    min_interval: int | None = by_hand()  # per-source overrides of the global clamps (seconds)
    max_interval: int | None = by_hand()
    publications: list[float] = field(default_factory=list)  # the latest 20, ascending
    ewma_interarrival: float | None = None  # seconds
    hour_counts: list[int] = field(default_factory=list)  # publications per UTC hour (rhythm)
    # The last decisions, newest first: {at, reason, before, after}.
    decisions: list[DecisionRecord] = field(default_factory=list)
    # Schedule: the interval, why it was chosen, and when the source is next due.
    interval: int = 0
    reason: str | None = None
    next_check_at: float | None = None
    locked_until: float | None = by_hand()  # the lease: taken by the scheduler, released with the outcome

    # Kind-specific state: a followed GitHub account's, and the GitHub timeline's.
    github: GitHubAccount | None = None
    timeline: TimelineState | None = None
    # A page read by CSS selectors: how it is read, as a person set it (`source add URL --items ...`).
    selectors: Selectors | None = by_hand()
    # Its own headers, user agent, cookies and proxy (None: starfeed's defaults).
    request: RequestOptions | None = by_hand()

    @property
    def host(self) -> str:
        return host_key_of(self.url)

    @property
    def live(self) -> bool:
        """Fetched and served: enabled and not removed."""
        return bool(self.enabled) and self.deleted_at is None


# A date before 1970 is a mistake (docs/design.md#times) (Hugo's 0001-01-01), whatever wrote it to the store.
_TRUSTED_FROM = "1970-01-01T00:00:00Z"
_STAMP = re.compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\dZ")


def _is_stamp(value: object) -> TypeGuard[str]:
    """An RFC 3339 UTC time as starfeed stores it; a hand-edited item may hold anything."""
    return isinstance(value, str) and _STAMP.fullmatch(value) is not None


@dataclass
class Entry:
    """The normalized entry (docs/design.md#entry-fields)."""

    entry_uid: str
    feed_id: str
    canonical_link: str | None = None
    title: str | None = None
    summary: str | None = None
    content: str | None = None
    authors: list[Author] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    enclosures: list[Enclosure] = field(default_factory=list)
    published: str | None = None
    updated: str | None = None
    first_seen: str = ""
    last_seen: str = ""
    seen_count: int = 1
    raw_refs: list[RawRef] = field(default_factory=list)
    content_hash: str = ""
    # Where an entry without a date to sort by (none, or one in the future when first seen) sits in
    # time order: where it was first seen, or, of a source's first fetch, with the oldest entries a
    # fetch keeps, as it predates the subscription by an unknown time (docs/design.md#undated-and-future).
    ordered_at: str | None = None
    # What starfeed changed to store the entry (an over-long link dropped, content truncated).
    warnings: list[str] = field(default_factory=list)
    # What the analyzer made of it (enrich/analysis.AnalyzerResult as a dict, docs/design.md#analyzer-result),
    # or None.
    analyzer_result: dict[str, Any] | None = None
    # Imported from the feed's archive (fetch/history.py), not seen new: no event, no analysis.
    backfilled: bool = False
    # The rules' verdict (docs/design.md#rules), as of the rule book it was judged by: the rule
    # that holds it out of every served feed (None: shown), the tags rules add to its categories,
    # and the named rule sets whose feeds it is in.
    blocked_by: str | None = None
    tags: list[str] = field(default_factory=list)
    rule_sets: list[str] = field(default_factory=list)

    @property
    def sort_time(self) -> str:
        """Publication time for ordering; when it is missing or was in the future when first
        seen, the backlog position (ordered_at) or else first_seen."""
        if _is_stamp(self.published) and _TRUSTED_FROM <= self.published <= self.first_seen:
            return self.published
        return self.ordered_at if _is_stamp(self.ordered_at) else self.first_seen


def sort_key_of(entry: Entry) -> str:
    """An entry's place in its feed and collections: time order, its uid breaking ties."""
    return f"{entry.sort_time}#{entry.entry_uid}"


# Where a parse's entries come from: a fetched document, whole; one a WebSub hub pushed, which may
# hold only some entries; a page of the feed's archive (fetch/history.py).
Document = Literal["feed", "push", "archive"]


@dataclass(frozen=True)
class Digest:
    """A source's entry digest as stored, one item beside its entries (parse/digest.py says what
    it holds and decides with it)."""

    sighted_at: str = ""  # RFC 3339: when a whole document was last sighted; "" when never
    held: dict[str, list[Any]] = field(default_factory=dict)  # entry_uid -> [hash start, sightings, last seen]

    @classmethod
    def of(cls, sighted_at: object, held_json: object) -> Digest:
        """A stored digest; a malformed one (edited by hand) holds only its well-formed parts."""
        try:
            held = json.loads(held_json) if isinstance(held_json, str) else None
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            held = None
        if not isinstance(sighted_at, str) or not isinstance(held, dict):
            return cls()
        return cls(sighted_at, {uid: [h, int(n), seen] for uid, value in held.items()
                                if isinstance(value, list) and len(value) == 3
                                and isinstance(h := value[0], str) and isinstance(seen := value[2], str)
                                and isinstance(n := value[1], (int, float)) and 0 <= n < 2 ** 53})

    def stored(self) -> str:
        return json.dumps(self.held)

    def sighting(self, entry_uid: str) -> tuple[str, int] | None:
        """(last_seen, seen_count) of a held entry."""
        value = self.held.get(entry_uid)
        return (value[2], value[1]) if value is not None else None


@dataclass(frozen=True)
class StoredEntry:
    """What the entry decision needs of a stored entry its source's digest cannot vouch for."""

    entry_uid: str
    content_hash: str
    first_seen: str
    seen_count: int
    rewrite_count: int  # times rewritten after a content change
    sort_key: str  # as stored: its collection copies are keyed by it
    analyzer_result: dict[str, Any] | None = None
    ordered_at: str | None = None  # its place when its date is none to sort by (a rewrite keeps it)
    rule_sets: tuple[str, ...] = ()  # the rule sets holding a copy of it: a rewrite leaves those it is no longer in


@dataclass(frozen=True)
class Rewrite:
    """A stored entry rewritten with its changed content."""

    entry: Entry  # its first sighting, sightings and analysis carried from the stored one
    rewrite_count: int
    stale_sort_key: str | None = None  # its collection copies' key, when the change moved it


@dataclass(frozen=True)
class Departure:
    """An entry that left its source's digest: its sightings move to its own item, if it is still stored."""

    entry_uid: str
    seen_count: int
    last_seen: str


@dataclass
class EntryWrites:
    """What the entry decision (parse/dedupe.py) asks storage to write, nothing else: storage writes
    them in this order (a rewrite before the digest that holds its hash)."""

    feed_id: str
    new: list[Entry] = field(default_factory=list)  # stored, with a copy per collection
    inserts: list[Entry] = field(default_factory=list)  # an archive page's: each stored unless its uid is
    rewrites: list[Rewrite] = field(default_factory=list)
    departures: list[Departure] = field(default_factory=list)
    # Beyond the digest's room: each one's own item counts one more sighting, at `seen`.
    sighted: list[str] = field(default_factory=list)
    seen: str = ""
    digest: Digest | None = None  # its new state; None: it stays as stored


@dataclass(frozen=True)
class FetchOutcome:
    """What one fetch of a source amounted to: the input of the scheduling decision."""

    http_status: int | None
    new_entries: int = 0
    not_modified: bool = False
    error: str | None = None
    retry_after: float | None = None
    ttl_minutes: int | None = None
    fresh_for: float | None = None  # HTTP Cache-Control max-age or Expires, in seconds
    skip_hours: tuple[int, ...] = ()
    skip_days: tuple[str, ...] = ()
    publications: tuple[float, ...] = ()  # publication times seen in the document
    failure: FailureClass | None = None  # whose failure it is, when it failed

    @property
    def failed(self) -> bool:
        return self.error is not None


# The population's pace (schedule/pace.py): the scheduler steps it hourly and stores it in the
# stats table (store/pace.py); every fetcher's decisions read it. Settings.initial_pace() is its start.
@dataclass(frozen=True)
class Pace:
    horizon: float  # seconds an active source waits at most beyond its quiet hours
    active_per_day: float  # posts a day from which a source counts as active
    reference: float = 0.0  # the entry-frequency rule's p95 delay on these sources (smoothed), seconds
