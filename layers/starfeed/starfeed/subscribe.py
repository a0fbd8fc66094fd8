"""What a person does to the sources, as the CLI (and any API) asks for it: subscribe after one
check, import an OPML file, sync, enable, disable, set a policy, remove (a soft delete), restore,
purge, set or clear a root domain. Each returns what it did, or raises Refused with a reason a
person can act on; none prints."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace

from starfeed.fetch import guard
from starfeed.fetch.http import Asking, asking, fetch
from starfeed.fetch.options import (
    Asked,
    OptionError,
    Secrets,
    apply,
    parse_proxy,
    proxy_login_stored,
    with_login,
)
from starfeed.fetch.stage import describe
from starfeed.inspect import Inspection, inspect_fetched
from starfeed.kinds.github import timeline_stopped
from starfeed.kinds.github_following import new_following
from starfeed.kinds.registry import FEED, SELECTORS, WEBSITE, kind_of
from starfeed.model import RequestOptions, Selectors, Source, host_key_of
from starfeed.parse.html import FeedLink, discover_feeds, looks_like_html
from starfeed.render import SOURCES_SUMMARY
from starfeed.settings import Settings
from starfeed.sources import BadSource, OpmlFeed, add_source, new_source, own_feed, subscribed
from starfeed.store import Storage

CHECKS_IN_FLIGHT = 8  # an OPML import checks this many feeds at once, at most 2 per host
CHECKS_PER_HOST = 2


class Refused(Exception):
    """The action was not taken; the message says why and what to do."""


@dataclass
class Checked:
    """A URL fetched once, as a new source's first fetch would be."""

    url: str  # the feed's URL: the one given, or the one its HTML page announces
    inspection: Inspection | None  # None when only the page's feeds were listed
    feeds: list[FeedLink] = field(default_factory=list)  # the feeds an HTML page announces
    picked_first: bool = False  # the page announces several and none was picked


def check(url: str, storage: Storage, pick: int | None, *, website: bool = False, backfill: int = 0,
          selectors: Selectors | None = None, ask: Asking | None = None) -> Checked:
    """An HTML page gives the feed it announces (pick: the Nth; 0: only list them), unless it is
    followed as a website or read by selectors. A URL that cannot be read is refused, and so is a
    page where a selector finds nothing."""
    settings = storage.settings
    crawled = website or selectors is not None
    if crawled:  # a page starfeed will crawl: its robots.txt decides before it is fetched
        _robots_allow(url, storage, crawl=True)
    result = fetch(url, settings, ask=ask)
    feeds, picked_first = [], False
    if not crawled and not result.error and looks_like_html(result.body, result.headers.get("Content-Type")):
        _robots_allow(result.url, storage)  # its links are crawled only where robots.txt allows
        feeds = discover_feeds(result.body, result.url)
        if not feeds:
            raise Refused(f"{url} is an HTML page that announces no feed; "
                          "subscribe with --website to follow its main article")
        if pick == 0:
            return Checked(url, None, feeds)
        picked_first = pick is None and len(feeds) > 1
        index = (pick or 1) - 1
        if not 0 <= index < len(feeds):
            raise Refused(f"--pick {pick}: the page announces {len(feeds)} feed(s)")
        if ask is not None and ask.secret_headers and not _same_origin(feeds[index].url, url):
            raise Refused(f"the page announces its feed on another site ({feeds[index].url}), which the "
                          "credentials given for the page are not sent to: subscribe to that URL itself, "
                          "with the options it needs")
        url = feeds[index].url
        result = fetch(url, settings, ask=ask)
    inspection = inspect_fetched(url, result, settings, website=website, backfill=backfill, selectors=selectors)
    if inspection.error:
        next_step = f"; next: {inspection.next_step}" if inspection.next_step else ""
        raise Refused(f"{url}: {unsubscribed(inspection.error)}; not subscribed (fix the URL, or add --no-check "
                      f"to subscribe anyway: the fetcher then retries it on its schedule){next_step}")
    return Checked(url, inspection, feeds, picked_first)


def _same_origin(url: str, other: str) -> bool:
    try:
        return guard.origin_of(url) == guard.origin_of(other)
    except guard.Refused:
        return False


@dataclass
class Subscription:
    """What `source add` and `POST /api/v1/feeds` did: "added", "already subscribed", "restored"
    (it had been removed), or "listed" (an HTML page's feeds listed, nothing subscribed)."""

    outcome: str
    source: Source | None
    checked: Checked | None = None  # None with no_check, or when the URL was subscribed already
    joined: list[str] = field(default_factory=list)  # collections a source subscribed already joined
    not_applied: list[str] = field(default_factory=list)  # options a source subscribed already kept as it was


def subscribe_url(storage: Storage, url: str, now: float, *, collections: list[str] | None = None,
                  backfill: int = 0, website: bool = False, pick: int | None = None, no_check: bool = False,
                  enforce_domain: bool = False, no_root_domain: bool = False,
                  deframe: bool = False, selectors: Selectors | None = None,
                  asked: Asked | None = None) -> Subscription:
    """Subscribe as a person would: a URL starfeed cannot take is refused before any fetch; one
    subscribed already is found (and restored if it was removed); else it is fetched once (an HTML
    page gives the feed it announces, the Nth with pick; pick 0 only lists them) and subscribed,
    due now. selectors: a page read by them (docs/design.md#selectors). asked: its request options
    (docs/design.md#request-options), refused when one cannot be used; their secret values go to the
    token store, and so does the URL's user:password@, taken off it (its Authorization header).
    Raises Refused with the reason."""
    if website and selectors is not None:
        raise Refused("--website follows a page's main article, --items reads its list: give one or the other")
    url, asked = with_login(url, asked or Asked())
    request, secrets = _options(asked, None, None)
    kind = (SELECTORS if selectors is not None else WEBSITE if website else FEED).name
    try:
        url = new_source(url, 0, collections, kind=kind, backfill=backfill, no_root_domain=True,
                         selectors=selectors).url
    except BadSource as exc:
        raise Refused(str(exc)) from None
    base = storage.settings.public_url.rstrip("/")
    if base and (url == base or url.startswith(base + "/")):
        raise Refused(f"{url} is this starfeed's own URL: subscribing would feed starfeed its own entries")
    asked = {"collections": collections or [], "website": website, "backfill": backfill,
             "enforce_domain": enforce_domain, "no_root_domain": no_root_domain, "deframe": deframe,
             "selectors": selectors, "request": request.configured}
    if (existing := subscribed(storage, [url]).get(url)) is not None:
        return _found(storage, existing, now, asked)
    checked = None
    if not no_check:
        checked = check(url, storage, pick, website=website, backfill=backfill, selectors=selectors,
                        ask=_asking(request, secrets, storage))
        if checked.inspection is None:
            return Subscription("listed", None, checked)
        url = checked.url
    stored = _store_secrets(storage, url, request, secrets)
    try:
        source, created = add_source(storage, url, now, collections, kind=kind, enforce_feed_domain=enforce_domain,
                                     backfill=backfill, no_root_domain=no_root_domain, deframe=deframe,
                                     selectors=selectors, request=request if request.configured else None)
    except BadSource as exc:
        if stored:
            storage.secrets.delete_source_secret(stored)
        raise Refused(str(exc)) from None
    if not created:
        if stored:
            storage.secrets.delete_source_secret(stored)
        return _found(storage, source, now, asked, checked)
    request_renders(storage)
    return Subscription("added", source, checked)


def _found(storage: Storage, source: Source, now: float, asked: dict, checked: Checked | None = None,
           render: bool = True) -> Subscription:
    """A URL subscribed already; asking for a removed one again undoes the remove. It joins the
    collections asked for that it was not in (its feeds rendered again unless render is False: an
    import asks once for all); the other options asked for stay as they were, and are named, with
    the command that changes each."""
    outcome = "already subscribed"
    if source.deleted_at is not None:
        source, outcome = restore(storage, source.source_id, now), "restored"
    joined = [c for c in asked["collections"] if c not in source.collections]
    if joined:
        source.collections = [*source.collections, *joined]
        storage.sources.change(source.source_id, {"collections": source.collections})
        for collection in joined:
            storage.collections.join(collection, source.source_id, has_entries=True)
        if render:
            request_renders(storage, kind_of(source).targets(source))
    kept = {"deframe": (asked.get("deframe") and not source.deframe, "`starfeed source deframe ID on`"),
            "website": (asked.get("website") and not kind_of(source).crawled, "remove it and subscribe again"),
            "selectors": (asked.get("selectors") not in (None, source.selectors),
                          "`starfeed source set ID --items SEL ...`" if source.selectors else
                          "remove it and subscribe again"),
            "enforce_domain": (asked.get("enforce_domain") and not source.enforce_feed_domain, "not changeable"),
            "backfill": (asked.get("backfill", 0) > 0, "only a first fetch backfills"),
            "no_root_domain": (asked.get("no_root_domain") and source.root_domain is not None,
                               "`starfeed root-domain clear ID`"),
            "request options": (asked.get("request"), "`starfeed source set ID --header ... --cookie ... --proxy ...`")}
    return Subscription(outcome, source, checked, joined,
                        [f"{name} ({how})" for name, (ignored, how) in kept.items() if ignored])


def _options(asked: Asked, options: RequestOptions | None, secrets: Secrets | None) -> tuple[RequestOptions, Secrets]:
    try:
        return apply(asked, options, secrets)
    except OptionError as exc:
        raise Refused(str(exc)) from None


def _asking(options: RequestOptions, secrets: Secrets, storage: Storage) -> Asking:
    try:
        return asking(options, secrets, storage.settings, storage.secrets.proxy_login)
    except OptionError as exc:
        raise Refused(str(exc)) from None


def _source_asking(storage: Storage, source: Source) -> Asking:
    """How the fetcher asks for this source, or Refused when its stored options cannot be used."""
    from starfeed.fetch.document import source_asking  # the fetcher's: not on the api's cold start

    ask = source_asking(storage, source)
    if not isinstance(ask, Asking):
        raise Refused(ask.error or "its request options cannot be used")
    return ask


def _store_secrets(storage: Storage, url: str, options: RequestOptions, secrets: Secrets) -> str | None:
    """Its secret values written to the token store under a new name, which options then holds
    (None when it has none)."""
    from starfeed.model import source_id_for

    if not options.has_secrets:
        options.secret = None
        return None
    options.secret = storage.secrets.source_secret_name(source_id_for(url))
    storage.secrets.put_source_secret(options.secret, secrets.stored())
    return options.secret


def global_proxy_of(source: Source, settings: Settings) -> str:
    """STARFEED_PROXY, for a source whose kind is fetched with request options (its GitHub kinds
    are not); else empty."""
    return settings.proxy if kind_of(source).takes_request_options else ""


def set_proxy_login(storage: Storage, url: str) -> str:
    """`starfeed proxy set URL`: the login of STARFEED_PROXY (template Proxy), given in its URL as
    user:password@, kept in the token store, where every fetch through it reads it (within
    CACHE_SECONDS of store/secrets.py). Returns where; Refused when the URL cannot be used, has no
    login, or names another proxy than STARFEED_PROXY."""
    try:
        proxy = parse_proxy(url, "starfeed proxy set")
    except OptionError as exc:
        raise Refused(str(exc)) from None
    if not storage.settings.proxy:
        raise Refused("this stack has no STARFEED_PROXY: deploy it with the parameter Proxy="
                      f"{proxy.shown} (locally: STARFEED_PROXY={proxy.shown} make run) first")
    try:
        current = parse_proxy(storage.settings.proxy, "STARFEED_PROXY")
    except OptionError as exc:
        raise Refused(str(exc)) from None
    if current.shown != proxy.shown:
        raise Refused(f"this stack's STARFEED_PROXY is {current.shown}, not {proxy.shown}: its login only is kept "
                      "here (the proxy itself is the template's parameter Proxy)")
    stored = proxy_login_stored(proxy)
    if stored is None:
        raise Refused(f"give its login: {proxy.scheme}://USER:PASSWORD@{proxy.shown.split('://', 1)[1]} "
                      "(`starfeed proxy clear` removes a login)")
    return storage.secrets.put_proxy_login(stored)


def set_request(storage: Storage, source_id: str, asked: Asked, now: float, *,
                no_check: bool = False) -> tuple[Source, Checked | None]:
    """Change a source's request options (docs/design.md#request-options): those given replace its
    own, the others stay. Unless no_check, it is fetched once with them first, and they are
    refused when it cannot be read so. Its next fetch reads it whole."""
    from starfeed.store.secrets import Unreadable

    source = _existing(storage, source_id)
    if not kind_of(source).takes_request_options:
        raise Refused(f"{source_id} is read through GitHub's API, which takes no request options")
    old = source.request
    secrets = None
    if old is not None and old.has_secrets:
        try:
            secrets = Secrets.of(storage.secrets.source_secret(old.secret or ""))
        except (Unreadable, OptionError) as exc:
            kept = [option for option, lost in (("--header", old.secret_headers and asked.headers is None),
                                                ("--cookie", old.cookies and asked.cookies is None),
                                                ("--proxy", old.proxy_credentials and asked.proxy is None
                                                 and not asked.no_proxy)) if lost]
            if kept:
                raise Refused(f"its secret values cannot be read ({exc}): give {', '.join(kept)} again") from None
    request, secrets = _options(asked, old, secrets)
    checked = None
    if not no_check:
        kind = kind_of(source)
        if kind.crawled:
            _robots_allow(source.url, storage, crawl=True)
        result = fetch(source.url, storage.settings, ask=_asking(request, secrets, storage))
        inspection = inspect_fetched(source.url, result, storage.settings, website=source.selectors is None
                                     and kind.crawled, selectors=source.selectors)
        if inspection.error:
            raise Refused(f"{source.url}: {unsubscribed(inspection.error)}; its request options stay as they were "
                          "(--no-check changes them without fetching)")
        checked = Checked(source.url, inspection)
    stored = _store_secrets(storage, source.url, request, secrets)
    fresh = {"request": request if request.configured else None, "etag": None, "last_modified": None,
             "body_sha256": None, "body_stored_at": None, "next_check_at": now, "locked_until": None}
    if not storage.sources.change(source_id, fresh):
        if stored:
            storage.secrets.delete_source_secret(stored)
        raise Refused(f"no source with id {source_id}: see `starfeed source list`")
    if old is not None and old.secret and old.secret != stored:
        storage.secrets.delete_source_secret(old.secret)
    source.request = fresh["request"]
    return source, checked


def _robots_allow(url: str, storage: Storage, crawl: bool = False) -> None:
    """Refused when the page's robots.txt disallows it for our token. Its answer is the one the
    fetchers share (cached in the hosts table for a day, docs/design.md#robots). crawl: the page
    is requested next, so it takes its host's Crawl-delay turn as a fetch does, and is refused
    while another request holds it (docs/design.md#crawl-delay)."""
    from starfeed.fetch import robots

    now = time.time()
    allowed = robots.check(storage, url, now, storage.hosts.robots_known)
    if not allowed.allowed:
        raise Refused(f"{url}: {allowed.reason}; not subscribed (starfeed crawls no page its robots.txt "
                      "disallows; a feed's own URL is not subject to it)")
    if crawl and (free_at := robots.turn(storage, url, allowed, now)) is not None:
        raise Refused(f"{url}: its host is not to be asked again for {max(1, round(free_at - now))} s (its "
                      f"robots.txt asks for {allowed.crawl_delay:g} s between requests): try again then, or add "
                      "--no-check not to read the page now (its next fetch waits its turn)")


def unsubscribed(error: str) -> str:
    """A fetch error as said of a URL not subscribed yet (the fetcher's advice is for sources)."""
    return error.removesuffix("; check it or remove the source")


def request_renders(storage: Storage, targets: list[str] = ()) -> None:
    """Render these targets and the views that list every source (/subscriptions.opml, /stats)."""
    if storage.settings.render_queue_url:
        storage.queues.send_render([*targets, SOURCES_SUMMARY])


def sync(storage: Storage, source_id: str, now: float) -> None:
    """Sync (docs/design.md#resurrection): due now, error, failures and lease cleared; refused when
    disabled or removed."""
    changes = {"next_check_at": now, "last_error": None, "locked_until": None, "consecutive_failures": 0}
    if not storage.sources.change(source_id, changes, require_enabled=True):
        source = storage.sources.get(source_id)
        if source is None:
            raise Refused(f"no source with id {source_id}: see `starfeed source list`")
        if source.deleted_at is not None:
            raise Refused(f"{source_id} was removed: `starfeed source restore {source_id}` first")
        raise Refused(f"{source_id} is disabled: `starfeed source enable {source_id}` first")


def set_field(storage: Storage, source_id: str, name: str, value) -> int:
    """enabled, polling, policy or deframe. Enabling or disabling, and deframing on or off (its
    items' titles change), re-render every feed the source is in. Returns how many stored entries
    were queued for analysis (deframing on, or a deframed source enabled)."""
    if not storage.sources.change(source_id, {name: value}):
        raise Refused(f"no source with id {source_id}: see `starfeed source list`")
    if name not in ("enabled", "deframe"):
        return 0
    source = storage.sources.get(source_id)
    if name == "enabled" and not value:
        stop_push(storage, source, time.time())
        timeline_stopped(storage, source, time.time())
    _rerender(storage, source)
    return resume_analysis(storage, source)


def set_selectors(storage: Storage, source_id: str, changes: dict[str, str | None], now: float, *,
                  no_check: bool = False) -> tuple[Source, Checked | None]:
    """Change how a page read by selectors is read (docs/design.md#selectors): the selectors named
    in changes (an empty date or summary selector: none). Unless no_check, the page is fetched
    once with them first, and they are refused when one finds nothing. The page is read again
    whole at the next scheduler run: its validators are cleared, so the same bytes are not taken
    for an unchanged page."""
    from starfeed.parse.selected import selectors_problem

    source = _existing(storage, source_id)
    if source.selectors is None:
        raise Refused(f"{source_id} is not a page read by selectors: remove it and subscribe again with "
                      "`starfeed source add URL --items SEL --title SEL --link SEL`")
    selectors = replace(source.selectors, **{role: (value or None) if role in ("date", "summary") else value
                                             for role, value in changes.items() if value is not None})
    if problem := selectors_problem(selectors):
        raise Refused(problem)
    checked = None
    if not no_check:
        _robots_allow(source.url, storage, crawl=True)
        result = fetch(source.url, storage.settings, ask=_source_asking(storage, source))
        inspection = inspect_fetched(source.url, result, storage.settings, selectors=selectors)
        if inspection.error:
            raise Refused(f"{source.url}: {unsubscribed(inspection.error)}; the selectors stay as they were "
                          "(--no-check changes them without reading the page)")
        checked = Checked(source.url, inspection)
    fresh = {"selectors": selectors, "etag": None, "last_modified": None, "body_sha256": None,
             "body_stored_at": None, "next_check_at": now, "locked_until": None}
    if not storage.sources.change(source_id, fresh):
        raise Refused(f"no source with id {source_id}: see `starfeed source list`")
    source.selectors = selectors
    return source, checked


def resume_analysis(storage: Storage, source: Source | None) -> int:
    """Queue the analysis of a deframed, live source's newest entries that have none: those
    stored before deframing was on, and those whose messages were dropped while the source was
    disabled or removed. Analyzed ones are not queued; the budget holds the rest."""
    if source is None or not source.deframe or not source.live or not storage.settings.enrich_queue_url:
        return 0
    pending = storage.analyses.unanalyzed(source.source_id, storage.settings.feed_item_limit)
    storage.queues.send_enrichments(source.source_id, pending)
    return len(pending)


def start_history(storage: Storage, source_id: str, now: float) -> Source:
    """RFC 5005: walk the source's archive once (fetch/history.py), through the history queue;
    refused for a source that is not live, or whose walk is under way (less than a day old)."""
    from starfeed.fetch.history import first_step

    source = _existing(storage, source_id)
    if not source.live:
        raise Refused(f"{source_id} is {'removed' if source.deleted_at is not None else 'disabled'}: "
                      "its history is walked once it is fetched again")
    running = source.history or {}
    if running.get("state") in ("queued", "walking") and now - (running.get("at") or 0) < 86400:
        raise Refused(f"{source_id}'s history is being walked already ({running.get('documents', 0)} documents, "
                      f"{running.get('entries', 0)} entries so far): `starfeed source show {source_id}` follows it")
    source.history = {"state": "queued", "documents": 0, "entries": 0, "reason": None, "at": now, "started_at": now,
                      "walked": running.get("walked", [])}
    storage.sources.change(source_id, {"history": source.history})
    storage.queues.send_history(first_step(source))
    return source


PROMPT_MAX_CHARS = 16_000  # a source's own prompt is stored on its item (400 KB at most)


def set_prompt(storage: Storage, source_id: str, text: str | None) -> str:
    """A source's own analyzer prompt (None: the default again); returns its version, which each
    result records. Results already stored keep theirs; new entries are analyzed with this one."""
    from starfeed.enrich.analysis import prompt_for

    if text is not None:
        text = text.strip()
        if not text:
            raise Refused("the prompt file is empty: `--clear` goes back to the default prompt")
        if len(text) > PROMPT_MAX_CHARS:
            raise Refused(f"a prompt of {len(text):,} characters is longer than {PROMPT_MAX_CHARS:,}")
    if not storage.sources.change(source_id, {"prompt": text}):
        raise Refused(f"no source with id {source_id}: see `starfeed source list`")
    return prompt_for(text).version


def _existing(storage: Storage, source_id: str) -> Source:
    source = storage.sources.get(source_id)
    if source is None:
        raise Refused(f"no source with id {source_id}: see `starfeed source list`")
    return source


def remove(storage: Storage, source_id: str, now: float) -> Source:
    """A soft delete (docs/design.md#source-states): the source stays stored with deleted_at, out of
    the Due index (never fetched; a fetch in flight loses its lease and writes nothing), its feed unpublished. `restore`
    undoes it; `purge` deletes it and its entries."""
    source = _existing(storage, source_id)
    if source.deleted_at is not None:
        raise Refused(f"{source_id} was removed already: `starfeed source restore {source_id}` brings it "
                      f"back, `starfeed source purge {source_id}` deletes it and its entries")
    if not storage.sources.change(source_id, {"deleted_at": now, "locked_until": None}):
        raise Refused(f"no source with id {source_id}: see `starfeed source list`")
    source.deleted_at = now
    stop_push(storage, source, now)
    timeline_stopped(storage, source, now)
    _rerender(storage, source)
    return source


def stop_push(storage: Storage, source: Source | None, now: float) -> str | None:
    """WebSub: a removed or disabled source's hub is asked to stop pushing it (the hub verifies
    that at the callback, which then clears the subscription). None, or why the hub was not told;
    meanwhile its pushes are discarded, the source being neither fetched nor served."""
    from starfeed.websub import hub, subscription

    push = source.push if source else None
    if not push or not (push.get("state") in (subscription.PENDING, subscription.VERIFIED) or push.get("renewing")):
        return None
    push = {**push, "state": subscription.UNSUBSCRIBING, "requested_at": now, "renewing": False, "reason": None}
    # Its validators go too: restored or enabled, its next fetch reads the document (a 304 has
    # none) and finds the hub again.
    storage.sources.change(source.source_id, {"push": push, "etag": None, "last_modified": None,
                                              "body_sha256": None, "body_stored_at": None})
    error = hub.ask(push["hub"], "unsubscribe", push["topic"],
                    hub.callback_url(storage.settings, source.source_id, push["token"]), None, storage.settings)
    if error:
        storage.sources.change(source.source_id, {"push": {**push, "reason": error}})
    source.push = {**push, "reason": error}
    return error


def restore(storage: Storage, source_id: str, now: float) -> Source:
    """Undo `remove`: due now (its lease cleared), its feeds rendered again."""
    source = _existing(storage, source_id)
    if source.deleted_at is None:
        raise Refused(f"{source_id} is not removed: `starfeed source list --deleted` lists the removed sources")
    changes = {"deleted_at": None, "next_check_at": now, "locked_until": None}
    if not storage.sources.change(source_id, changes):
        raise Refused(f"no source with id {source_id}: see `starfeed source list`")
    for name, value in changes.items():
        setattr(source, name, value)
    _rerender(storage, source)
    resume_analysis(storage, source)
    return source


def purge(storage: Storage, source_id: str) -> int:
    """Delete a removed source for good: its entries, their copies in its collections, its
    memberships and itself; its feeds rendered again. Returns the number of entries deleted."""
    source = _existing(storage, source_id)
    if source.deleted_at is None:
        raise Refused(f"{source_id} is not removed: `starfeed source remove {source_id}` first "
                      "(purge deletes only removed sources)")
    # Entries first: a purge that fails half-way leaves the source, and purging again finishes.
    purged = storage.entries.purge(source_id, source.collections)
    storage.sources.delete(source_id)
    if source.request is not None and source.request.secret:
        storage.secrets.delete_source_secret(source.request.secret)
    _rerender(storage, source)
    return purged


def _rerender(storage: Storage, source: Source | None) -> None:
    """Every feed the source appears in, its own included (the renderer deletes that one when the
    source is gone or disabled), and the views that list every source."""
    if source is not None:
        request_renders(storage, kind_of(source).targets(source))


# A root domain: a lower-case host name (example.com, localhost, 127.0.0.1).
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
ROOT_DOMAIN = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*")


def find(storage: Storage, id_or_url: str) -> Source:
    """A source by its id, or by its URL (the one subscribed, or where it moved)."""
    key = id_or_url.strip()
    source = (subscribed(storage, [key]).get(key) if "://" in key else storage.sources.get(key))
    if source is None:
        raise Refused(f"no source with {'URL' if '://' in key else 'id'} {key}: see `starfeed source list`")
    return source


def set_root_domain(storage: Storage, id_or_url: str, domain: str) -> tuple[Source, str]:
    """Set a source's root domain by hand, lower-cased, spaces and a final dot cut
    (docs/design.md#root-domain)."""
    domain = domain.strip().lower().rstrip(".")
    if not ROOT_DOMAIN.fullmatch(domain):
        raise Refused(f"not a domain name: {domain!r} (expected a host name such as example.com)")
    source = find(storage, id_or_url)
    storage.sources.change(source.source_id, {"root_domain": domain})
    return source, domain


def clear_root_domain(storage: Storage, id_or_url: str) -> Source:
    """The source keeps no root domain (it leaves `/api/site`; docs/design.md#root-domain)."""
    source = find(storage, id_or_url)
    storage.sources.change(source.source_id, {"root_domain": None})
    return source


def root_domains(storage: Storage) -> list[tuple[str | None, int]]:
    """Every root domain with its number of sources (removed ones left out), sorted by name;
    the sources without one last, as None."""
    counts = storage.sources.root_domains()
    return sorted(((d, n) for d, n in counts.items() if d), key=lambda p: p[0]) + (
        [(None, counts[None])] if counts.get(None) else [])


@dataclass
class Imported:
    """One OPML feed's outcome: added, already subscribed, skipped or failed."""

    outcome: str
    text: str
    quiet: bool = False  # added, but its first fetch keeps nothing
    targets: list[str] = field(default_factory=list)  # renders it asks for
    dropped: dict[str, int] = field(default_factory=dict)  # what its first fetch leaves out, by reason


def import_known(storage: Storage, feed: OpmlFeed, existing: dict[str, Source], backfill: int) -> Imported | None:
    """The outcome for a feed that needs no check: this starfeed's own feeds, a URL starfeed
    cannot take, one subscribed already (it joins the file's folders it was not in); else None."""
    target = own_feed(feed.url, storage.settings.public_url)
    if target == "c/github/feed":
        following = new_following(storage.settings, 0)
        if storage.sources.get(following.source_id):
            return Imported("already subscribed", f"{feed.url}: starfeed's own GitHub feed, of the accounts you follow")
        return Imported("skipped", f"{feed.url}: starfeed's own GitHub feed; `starfeed github connect` "
                                   "follows the stars of the accounts you follow")
    own = storage.sources.get(target[2:-5]) if target and target.startswith("s/") else None
    if own is not None:  # as /subscriptions.opml lists a website source
        return Imported("already subscribed", f"{own.source_id} {own.url} (starfeed's own feed of it: {feed.url})")
    if target and target.startswith("s/"):
        return Imported("skipped", f"{feed.url}: starfeed's own feed of a source it no longer has")
    if target:
        return Imported("skipped", f"{feed.url}: one of starfeed's own feeds; subscribing would loop its entries back")
    try:
        new_source(feed.url, 0, feed.collections, backfill=backfill)
    except BadSource as exc:
        return Imported("failed", str(exc))
    source = existing.get(feed.url.strip())
    if source is None:
        return None
    done = _found(storage, source, time.time(), {"collections": feed.collections}, render=False)
    restored, source, joined = done.outcome == "restored", done.source, done.joined
    text = f"{source.source_id} {source.url}" + (", restored: it had been removed" if restored else "") \
        + (f", now also in {', '.join(joined)}" if joined else "")
    return Imported("added" if restored else "already subscribed", text,
                    targets=kind_of(source).targets(source) if joined else [])


def checked(feeds: list[OpmlFeed], storage: Storage, no_check: bool, backfill: int,
            logins: dict[str, Asked] | None = None) -> Iterator[tuple[OpmlFeed, Inspection | None, str | None]]:
    """(feed, inspection, error) for each feed, as its check completes: CHECKS_IN_FLIGHT at once,
    CHECKS_PER_HOST per host; a feed in logins is asked with its login. With no_check, at once and
    without a fetch."""
    if no_check:
        for feed in feeds:
            yield feed, None, None
        return
    hosts: dict[str, threading.Semaphore] = {}
    lock = threading.Lock()
    settings = storage.settings

    def one(feed):
        with lock:
            per_host = hosts.setdefault(host_key_of(feed.url), threading.Semaphore(CHECKS_PER_HOST))
        # STARFEED_PROXY, if set
        ask = asking(*apply((logins or {}).get(feed.url, Asked()), None, None), settings, storage.secrets.proxy_login)
        with per_host:
            result = fetch(feed.url, settings, ask=ask)
        if not result.error and looks_like_html(result.body, result.headers.get("Content-Type")):
            return None, ("an HTML page, not a feed: `starfeed source add URL` subscribes to the feed "
                          "it announces")
        inspection = inspect_fetched(feed.url, result, settings, backfill=backfill)
        return inspection, inspection.error

    pool = ThreadPoolExecutor(CHECKS_IN_FLIGHT)
    try:
        futures = {pool.submit(one, feed): feed for feed in feeds}
        for future in as_completed(futures):
            try:
                inspection, error = future.result()
            except Exception as exc:  # noqa: BLE001 - that feed's failure, not the import's
                inspection, error = None, describe(exc)
            yield futures[future], inspection, error
    finally:  # Ctrl+C, or a failure writing a source: the checks not started are not made
        pool.shutdown(wait=False, cancel_futures=True)


def import_new(storage: Storage, feed: OpmlFeed, inspection: Inspection | None, now: float,
               backfill: int, login: Asked | None = None) -> Imported:
    from starfeed.inspect import found, kept_words

    try:
        source, created = add_listed(storage, feed, now, backfill=backfill, jitter=storage.settings.startup_jitter,
                                     login=login)
    except (BadSource, Refused) as exc:
        return Imported("failed", str(exc))
    where = f" in {', '.join(source.collections)}" if source.collections else ""
    if not created:
        return Imported("already subscribed", f"{source.source_id} {source.url}{where}")
    if inspection is None:
        return Imported("added", f"{source.source_id} {source.url}{where} (not checked)")
    ingested = inspection.ingested
    return Imported("added", f"{source.source_id} {source.url}{where}: {found(inspection)}, {kept_words(inspection)}",
                    bool(ingested.parsed_count) and not ingested.entries, dropped=dict(ingested.dropped))


def logins_off(feeds: list[OpmlFeed]) -> dict[str, Asked]:
    """Each feed's user:password@ taken off its URL (an OPML file, STARFEED_SOURCES), so that no
    list or message shows it: {its URL without them: the Asked that sends them as its Basic
    credentials}."""
    logins = {}
    for feed in feeds:
        feed.url, asked = with_login(feed.url, Asked())
        if asked.login is not None:
            logins.setdefault(feed.url, asked)
    return logins


def add_listed(storage: Storage, feed: OpmlFeed, now: float, *, backfill: int = 0, jitter: float = 0.0,
               login: Asked | None = None) -> tuple[Source, bool]:
    """add_source for a feed of a list (an OPML file, STARFEED_SOURCES), its login (logins_off) kept
    in the token store as a subscription's secrets are. BadSource or Refused."""
    request, secrets = _options(login or Asked(), None, None)
    stored = _store_secrets(storage, feed.url, request, secrets)
    try:
        source, created = add_source(storage, feed.url, now, feed.collections, jitter=jitter, backfill=backfill,
                                     request=request if request.configured else None)
    except BadSource:
        if stored:
            storage.secrets.delete_source_secret(stored)
        raise
    if not created and stored:
        storage.secrets.delete_source_secret(stored)
    return source, created
