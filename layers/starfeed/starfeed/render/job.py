"""Render feed targets from the store to S3: every format, plus the HTML index for the aggregate,
the collections and the rule sets, and the sources summary the admin views read. A source's own
feed is built by the api when asked (serve/variants.py): rendering its three formats on every new
entry, read or not, was most of the bill's S3 PUTs; its target here tells the WebSub hub, or
unpublishes it.

Each target is rendered on its own: one that fails is reported with its reason and the others
are still written, so the renderer's handler retries only the SQS records that named it.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache

from starfeed import observe
from starfeed.formats import FORMATS
from starfeed.kinds.registry import kind_of
from starfeed.model import Entry, Source
from starfeed.parse.normalize import rfc3339
from starfeed.render import SOURCES_SUMMARY, summary
from starfeed.render.feeds import FeedMeta, render
from starfeed.render.html import IndexPage, github_notice, render_index
from starfeed.render.opml import published_opml, subscriptions_opml
from starfeed.render.pages import feed_page, target_parts
from starfeed.schedule.github import TIERS
from starfeed.sources import GITHUB_COLLECTION as GITHUB
from starfeed.stats import render_bucket
from starfeed.store import Storage

log = logging.getLogger(__name__)


@dataclass
class RenderReport:
    rendered: list[str] = field(default_factory=list)
    announced: list[str] = field(default_factory=list)  # a source's feed: built when read, the hub told
    unpublished: list[str] = field(default_factory=list)  # a removed or disabled source's feed, deleted
    skipped: list[str] = field(default_factory=list)  # names nothing we render
    failed: dict[str, str] = field(default_factory=dict)  # target -> why


def render_targets(storage: Storage, targets: list[str], now: float | None = None) -> RenderReport:
    """targets are feed paths: "feed" (all sources), "c/<collection>/feed", "s/<source_id>/feed",
    "r/<rule set>/feed", or SOURCES_SUMMARY (/opml.xml, /subscriptions.opml and the dashboard's
    sources)."""
    now = time.time() if now is None else now
    report, timings = RenderReport(), Counter()
    # What every page of this run shows, read once: the collections, the rule sets and any GitHub notice.
    collections = cache(storage.collections.counts)
    sets = cache(storage.rules.rule_sets)
    notice = cache(lambda: github_notice(storage.hosts.pause_of(storage.settings.github_host, now)))
    wanted = set(targets)
    for target in sorted(wanted - {SOURCES_SUMMARY}):
        try:
            with observe.span("render", target=target):
                outcome = _render_target(storage, target, now, _Shared(collections, sets, notice), timings)
        except Exception as exc:  # reported; the other targets go on
            log.exception("renderer: %s failed; the records naming it are retried", target)
            report.failed[target] = f"{type(exc).__name__}: {exc}"[:500]
            continue
        getattr(report, outcome).append(target)
    # Asked for by whatever changed how a source is listed: the CLI, or a fetch that changed it;
    # and a rule set's feed unpublished leaves /opml.xml at once.
    if SOURCES_SUMMARY in wanted or any(target_parts(t)[0] == "r" for t in report.unpublished):
        try:
            render_sources_summary(storage, now, collections(), sets())
            report.rendered.append(SOURCES_SUMMARY)
        except Exception as exc:
            log.exception("renderer: the sources summary failed")
            report.failed[SOURCES_SUMMARY] = f"{type(exc).__name__}: {exc}"[:500]
    observe.metric(observe.RENDERS, len(report.rendered))
    _tell_the_hub(storage, [t for t in report.rendered + report.announced if t != SOURCES_SUMMARY])
    try:
        storage.counters.add(timings)
        storage.counters.flush()  # renders are few: keep their times now
    except Exception:  # statistics never cost a render
        log.exception("renderer: render times were not recorded")
    return report


def _tell_the_hub(storage: Storage, targets: list[str]) -> None:
    """WebSub publishing: each rendered feed's URLs (every render follows a change: new entries,
    results, a source listed or unlisted), once they are in the bucket."""
    hub, base = storage.settings.websub_hub, storage.settings.public_url.rstrip("/")
    if not hub or not targets:
        return
    from starfeed.websub.hub import ping

    urls = [f"{base}/{fmt.file(target)}" for target in targets for fmt in FORMATS]
    failures = ping(hub, urls, storage.settings)
    if failures:
        log.warning("renderer: the WebSub hub was not told of %d of %d feed URLs (the next render tells it "
                    "again): %s", len(failures), len(urls), "; ".join(failures[:3]))


@dataclass(frozen=True)
class _Shared:
    """What every page of a run shows, each read on first use."""

    collections: Callable[[], dict[str, int]]
    rule_sets: Callable[[], tuple[str, ...]]
    notice: Callable[[], str | None]


def _render_target(storage: Storage, target: str, now: float, shared: _Shared, timings: Counter) -> str:
    """"rendered", "announced", "unpublished" or "skipped"; raises when the target cannot be
    rendered."""
    kind, name = target_parts(target)
    if kind == "r" and name not in shared.rule_sets():
        # A set whose last rule was removed: its feed and page leave the bucket, as a removed source's do.
        storage.blobs.delete_feeds([fmt.file(target) for fmt in FORMATS] + [f"r/{name}/index.html"])
        log.info("renderer: %s unpublished: no rule is in the set %s", target, name)
        return "unpublished"
    if kind == "s":
        source = storage.sources.get(name)
        rendered_before = [fmt.file(target) for fmt in FORMATS]
        if source is not None and source.live:
            # A copy an older starfeed rendered would go stale in the bucket (and on a CDN in
            # front of it): gone at its source's next change. A HEAD costs what a GET does.
            if storage.blobs.has_feed(rendered_before[0]):
                storage.blobs.delete_feeds(rendered_before)
            return "announced"
        # Unsubscribed means unpublished: no copy an older starfeed rendered stays in the bucket.
        storage.blobs.delete_feeds(rendered_before)
        log.info("renderer: %s unpublished: its source is %s", target,
                 "purged" if source is None else "removed" if source.deleted_at else "disabled")
        return "unpublished"
    page = feed_page(storage, target, now)
    if page is None:
        log.info("renderer: %s names nothing to render; skipped", target)
        return "skipped"
    meta, entries, sources = page
    if kind in ("", "c", "r"):
        prefix = f"{kind}/{name}/" if kind else ""
        _render_index(storage, meta, prefix, entries, sources, shared, now)
    for fmt in FORMATS:
        started = time.perf_counter()
        document = render(fmt.name, meta, entries, now)
        timings[f"render:{fmt.name}:{render_bucket((time.perf_counter() - started) * 1000)}"] += 1
        storage.blobs.put_feed(fmt.file(target), document, fmt.content_type, rendered_at=now)
    log.info("renderer: %s with %d entries", target, len(entries))
    return "rendered"


def _render_index(storage: Storage, meta: FeedMeta, prefix: str, entries: list[Entry],
                  sources: dict[str, Source], shared: _Shared, now: float) -> None:
    page = IndexPage(meta.title, f"/{meta.feed_id}", shared.collections(), shared.rule_sets(), notice=shared.notice())
    pages = {f"{prefix}index.html": (page, entries)}
    if prefix == f"c/{GITHUB}/":
        # The accounts' activity filter: one page per tier, linked from each (the pages run no script).
        tier_of = {i: kind_of(s).tier(s) for i, s in sources.items()}
        for tier in (None, *TIERS):
            filters = tuple((t or "all", f"/c/{GITHUB}/" + (f"?tier={t}" if t else ""), t == tier)
                            for t in (None, *TIERS))
            shown = [e for e in entries if tier is None or tier_of.get(e.feed_id) == tier]
            pages[f"{prefix}index{'-' + tier if tier else ''}.html"] = (replace(page, filters=filters), shown)
    for key, (index_page, shown) in pages.items():
        storage.blobs.put_feed(key, render_index(index_page, shown, meta.origins, rfc3339(now)),
                               "text/html; charset=utf-8", rendered_at=now)


def render_sources_summary(storage: Storage, now: float, collections: dict[str, int],
                           sets: tuple[str, ...]) -> None:
    """One Scan of the sources for every view that lists them; the api reads these objects."""
    sources = [s for s in storage.sources.all() if s.deleted_at is None]  # removed: listed nowhere
    put = storage.blobs.put_feed
    base = storage.settings.public_url
    built = [s for s in sources if kind_of(s).published(s)]
    put(summary.PUBLISHED_OPML, published_opml(base, built, collections, now, sets), summary.OPML_TYPE,
        rendered_at=now)
    # Unsubscribed means unpublished, here too.
    lines = [line for s in sources if s.enabled and (line := kind_of(s).subscription(s, base)) is not None]
    put(summary.SUBSCRIPTIONS_OPML, subscriptions_opml(lines, now), summary.OPML_TYPE, rendered_at=now)
    put(summary.SUMMARY, summary.dumps([summary.row_of(s, kind_of(s).published(s)) for s in sources], now),
        summary.JSON_TYPE, rendered_at=now)
    log.info("renderer: sources summary with %d sources", len(sources))
