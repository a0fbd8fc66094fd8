"""A followed GitHub account: its stars, as items of the GitHub feed (docs/design.md#github-stars),
polled at the EMA of the gaps between them. `github connect` and the follow list create these."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from starfeed.formats import DEFAULT
from starfeed.kinds.base import GitHubKind
from starfeed.model import GitHubAccount, Source, Status, root_domain_of, source_id_for
from starfeed.render.opml import GITHUB, GITHUB_TITLE, Subscription
from starfeed.settings import Settings
from starfeed.sources import GITHUB_COLLECTION

if TYPE_CHECKING:
    from starfeed.fetch.github import GitHub, Read
    from starfeed.parse.github import Account
    from starfeed.schedule.decide import Decision
    from starfeed.store import Storage

log = logging.getLogger(__name__)
GITHUB_WEB = "https://github.com"  # where a followed account's page is


def account(source: Source) -> GitHubAccount:
    """What the source knows of its account (an item edited by hand may have lost it)."""
    return source.github or GitHubAccount(login=source.title or "")


class GitHubUser(GitHubKind):
    name = "github-user"
    publishes = True  # its stars are entries: of its own feed, the aggregate and the GitHub feed
    list_group = 2

    def label(self, source: Source) -> str:
        return f"{account(source).login or source.title} (GitHub stars)"

    def tier(self, source: Source) -> str:
        return account(source).tier or "low"  # low until three stars

    def site(self, source: Source) -> str | None:
        login = account(source).login
        return source.site_url or (f"{GITHUB_WEB}/{login}" if login else None)

    def subscription(self, source: Source, base: str) -> Subscription | None:
        """Its API URL is no feed: starfeed's GitHub feed, once for every account (`starfeed opml
        import` knows it for this starfeed's own)."""
        if not self.published(source):
            return None
        base = base.rstrip("/")
        return Subscription(GITHUB_TITLE, f"{base}/" + DEFAULT.file(f"c/{GITHUB}/feed"), f"{base}/c/{GITHUB}/")

    def read(self, github: GitHub, storage: Storage, source: Source, now: float) -> Read:
        from starfeed.fetch.github import read_stars

        known = account(source)
        return read_stars(github, known.login, source.etag, source.last_modified,
                          lambda uids: storage.entries.known(source.source_id, uids),
                          first_sync=source.status == Status.NEW, now=now, last_starred_at=known.last_starred_at)

    def keep(self, storage: Storage, source: Source, read: Read, before: Source, lease: float | None,
             now: float) -> int:
        """Its new stars, their collection copies and its last_starred_at, written together."""
        from starfeed.fetch.entries import entry_targets, judged_new
        from starfeed.fetch.record import publish_new, tap_new
        from starfeed.parse.github import star_entry

        if not read.stars:
            return 0
        known = account(source)
        entries = judged_new(storage, [star_entry(known.login, star, source.source_id, now) for star in read.stars],
                             source, now)
        source.github = known
        storage.entries.store_stars(source, entries, lease)
        if sets := entry_targets(entries):  # its rule sets' feeds (its own: the fetch asks for them)
            storage.queues.send_render(sets)
        publish_new(storage, source, entries)
        tap_new(storage, source, entries, now)
        # Every star time known now: on a first sync, the EMA is seeded with all of their gaps.
        source.publications = sorted(set(source.publications) | {s.starred_epoch for s in read.stars})
        source.entry_count += len(entries)
        # Were these stars announced? Without a hint since the last fetch, the timeline missed them.
        source.github = replace(source.github, timeline_covered=(known.hinted_at or 0) > (before.last_fetch_at or 0))
        return len(entries)

    def checked(self, source: Source, read: Read, new: int, now: float, settings: Settings) -> Decision:
        from starfeed.schedule.github import account_checked

        return account_checked(source, source.publications, new, now, settings)

    def succeeded(self, source: Source, read: Read, decision: Decision) -> None:
        source.etag = read.etag or source.etag
        source.last_modified = read.last_modified or source.last_modified
        source.github = replace(account(source), tier=decision.tier or account(source).tier)


KIND = GitHubUser()


def uncover_all(storage: Storage, now: float, why: str) -> None:
    """Some stars may have been missed: every account the timeline covered goes back to its EMA."""
    users = storage.sources.get_many(set(storage.collections.members(GITHUB_COLLECTION)))
    covered = [u for u in users.values() if account(u).timeline_covered]
    for user in covered:
        back = now + (user.ewma_interarrival or storage.settings.github_default_minutes * 60)
        changes: dict[str, object] = {"github": replace(account(user), timeline_covered=False)}
        if user.next_check_at is not None:  # one not re-armed (polling off, parked) stays so
            changes["next_check_at"] = min(user.next_check_at, back)
        storage.sources.change(user.source_id, changes)
    if covered:
        log.warning("fetcher: GitHub timeline: %s; %d account(s) back to their star EMA", why, len(covered))



def account_key(api: str, user_id: int) -> str:
    """What a followed account's source id is made from: its numeric id, which a rename keeps."""
    return f"{api.rstrip('/')}/user/{user_id}"


def new_account(settings: Settings, followed: Account, now: float) -> Source:
    """A followed account, keyed by its numeric id so a renamed account keeps its stars. Due at
    once: the GitHub host's message groups already cap the calls in flight, so no jitter."""
    api = settings.github_api_url.rstrip("/")
    url = f"{api}/users/{followed.login}/starred"
    known = GitHubAccount(login=followed.login, user_id=followed.user_id, tier="low")
    return Source(source_id=source_id_for(account_key(api, followed.user_id)), kind=KIND.name, url=url,
                  title=followed.login, github=known, created_at=now, collections=[GITHUB_COLLECTION],
                  next_check_at=now, root_domain=root_domain_of(url) or None)
