"""The GitHub follow list of the token's user: one source per deployment, re-synced daily, that
keeps one github-user source per followed account. It publishes nothing of its own."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from starfeed.kinds.base import GitHubKind
from starfeed.kinds.github_user import KIND as ACCOUNT
from starfeed.kinds.github_user import account
from starfeed.model import Source, root_domain_of, source_id_for
from starfeed.render import SOURCES_SUMMARY
from starfeed.render.opml import Subscription
from starfeed.settings import Settings

if TYPE_CHECKING:
    from starfeed.fetch.github import GitHub, Read
    from starfeed.schedule.decide import Decision
    from starfeed.store import Storage

log = logging.getLogger(__name__)


class GitHubFollowing(GitHubKind):
    name = "github-following"

    def subscription(self, source: Source, base: str) -> Subscription | None:
        return None  # no feed of its own: its accounts are in the GitHub feed

    def read(self, github: GitHub, storage: Storage, source: Source, now: float) -> Read:
        from starfeed.fetch.github import read_following

        return read_following(github)

    def keep(self, storage: Storage, source: Source, read: Read, before: Source, lease: float | None,
             now: float) -> int:
        """Upsert one github-user source per followed account; disable those no longer followed
        (their entries stay); a renamed account keeps its source and its stars."""
        from starfeed.kinds.github_timeline import new_timeline
        from starfeed.kinds.github_user import new_account
        from starfeed.sources import GITHUB_COLLECTION

        settings = storage.settings
        known = storage.sources.get_many(set(storage.collections.members(GITHUB_COLLECTION)))
        followed = {}
        for followed_account in read.accounts:
            user = new_account(settings, followed_account, now)
            followed[user.source_id] = user
            current = known.get(user.source_id)
            if current is None:
                if storage.sources.add(user):
                    storage.collections.join(GITHUB_COLLECTION, user.source_id)
            elif not current.enabled or account(current).login != followed_account.login:
                renamed = replace(account(current), login=followed_account.login, user_id=followed_account.user_id)
                storage.sources.change(user.source_id, {"enabled": True, "github": renamed,
                                                        "title": followed_account.login, "url": user.url})
        gone = [s for s in known.values() if s.kind == ACCOUNT.name and s.enabled and s.source_id not in followed]
        for user in gone:
            storage.sources.change(user.source_id, {"enabled": False, "reason": "no longer followed"})
        added = set(followed) - set(known)
        if gone or added:  # an unfollowed account's feed is unpublished; the listings change
            storage.queues.send_render(sorted({t for user in gone for t in ACCOUNT.targets(user)}) + [SOURCES_SUMMARY])
        if storage.sources.add(new_timeline(settings, now)):  # a deployment from before the timeline
            log.info("fetcher: GitHub timeline subscribed: followed accounts' stars are fetched as they are announced")
        source.title = f"GitHub follow list ({len(followed)} accounts)"
        log.info("fetcher: GitHub follow list: %d accounts, %d new, %d no longer followed", len(followed),
                 len(added), len(gone))
        return 0

    def checked(self, source: Source, read: Read, new: int, now: float, settings: Settings) -> Decision:
        from starfeed.schedule.github import following_checked

        return following_checked(source, now, settings)


KIND = GitHubFollowing()


def new_following(settings: Settings, now: float) -> Source:
    """The follow list of the token's user: one per deployment, re-synced daily."""
    url = f"{settings.github_api_url.rstrip('/')}/user/following"
    return Source(source_id=source_id_for(url), url=url, kind=KIND.name, created_at=now,
                  title="GitHub follow list", next_check_at=now, root_domain=root_domain_of(url) or None)
