"""The GitHub timeline of the token's user (received events): hints that a followed account
starred, which make that account due at once. It publishes nothing of its own."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

from starfeed.kinds.base import GitHubKind
from starfeed.kinds.github_user import KIND as ACCOUNT
from starfeed.kinds.github_user import account
from starfeed.model import Source, TimelineState, root_domain_of, source_id_for
from starfeed.parse.github import Answer
from starfeed.render.opml import Subscription
from starfeed.settings import Settings

if TYPE_CHECKING:
    from starfeed.fetch.github import GitHub, Read, TimelineRead
    from starfeed.schedule.decide import Decision
    from starfeed.store import Storage

log = logging.getLogger(__name__)


class GitHubTimeline(GitHubKind):
    name = "github-timeline"

    def subscription(self, source: Source, base: str) -> Subscription | None:
        return None  # no feed of its own: it only makes accounts due

    def read(self, github: GitHub, storage: Storage, source: Source, now: float) -> Read:
        """Ask GitHub who the token's user is, the first time, then read that user's timeline."""
        from starfeed.fetch.github import TimelineRead, Verdict, read_timeline, whoami

        state = source.timeline or TimelineState()
        pages = []
        if not state.login:
            page, login = whoami(github)
            pages.append(page.result)
            if login is None:
                verdict = (page.verdict if page.verdict.answer != Answer.OK
                           else Verdict(Answer.FAILED, "GitHub did not name the token's user"))
                return _only_timeline(TimelineRead(verdict, pages))
            state = source.timeline = replace(state, login=login)
            source.title = f"GitHub timeline of {login}"
            source.url = f"{github.settings.github_api_url.rstrip('/')}/users/{login}/received_events"
        read = read_timeline(github, state.login or "", source.etag, source.timeline)
        read.pages[:0] = pages
        return _only_timeline(read)

    def keep(self, storage: Storage, source: Source, read: Read, before: Source, lease: float | None,
             now: float) -> int:
        """Make every followed account the timeline saw star due now, and fetch it at once."""
        from starfeed.fetch.github import TimelineRead
        from starfeed.kinds.github_user import account_key, uncover_all
        from starfeed.schedule.dispatch import send_now
        from starfeed.schedule.github import timeline_step

        assert isinstance(read, TimelineRead)  # as read() gives it
        state = source.timeline or TimelineState()
        asked = read.poll_interval
        state = replace(state, read_at=now, poll_interval=asked if asked and asked > 0 else None)
        if read.verdict.answer == Answer.OK:
            step = timeline_step(read.events, source.timeline, read.reached_end)
            state = replace(state, newest_id=step.newest_id, watch_ids=list(step.watch_ids))
            api = storage.settings.github_api_url
            stars = Counter(source_id_for(account_key(api, actor)) for actor in step.starred)
            active = {source_id_for(account_key(api, actor)) for actor in step.active}
            accounts = [a for a in storage.sources.get_many(set(stars) | active).values()
                        if a.kind == ACCOUNT.name and a.live and a.polling]
            hinted = [a.source_id for a in accounts if a.source_id in stars
                      and storage.sources.change(a.source_id, {"next_check_at": now,
                                                               "github": replace(account(a), hinted_at=now)},
                                                 require_enabled=True)]
            for followed in accounts:  # its events reach the timeline: its stars will too
                if not account(followed).timeline_covered and followed.source_id not in stars:
                    storage.sources.change(followed.source_id,
                                           {"github": replace(account(followed), timeline_covered=True)})
            if hinted:
                send_now(storage, hinted, now)
                count = sum(stars[i] for i in hinted)
                state = replace(state, hinted=state.hinted + count, last_hinted_at=now)
                log.info("fetcher: GitHub timeline: %d star(s) by %d followed account(s); fetching them now",
                         count, len(hinted))
            if step.overflowed:
                state = replace(state, overflowed_at=now)
                uncover_all(storage, now, "more events than the timeline keeps came in since its last read")
        source.timeline = state
        source.etag = read.etag or source.etag  # last: a read that failed to apply is read again
        return 0

    def checked(self, source: Source, read: Read, new: int, now: float, settings: Settings) -> Decision:
        from starfeed.schedule.github import timeline_checked

        return timeline_checked(source, now, settings)

    def failed(self, storage: Storage, source: Source, now: float) -> None:
        """Stars may go unannounced: every account it covered goes back to its EMA."""
        from starfeed.kinds.github_user import uncover_all

        uncover_all(storage, now, "the timeline failed")


def _only_timeline(read: TimelineRead) -> TimelineRead:
    """A token may read follows and stars but not events: the timeline fails alone, the stars go on."""
    from starfeed.fetch.github import Verdict

    if read.verdict.answer == Answer.REJECTED:
        read.verdict = Verdict(Answer.FAILED,
                               f"{read.verdict.reason} (for the timeline only: stars are polled as before)")
    return read


KIND = GitHubTimeline()


def new_timeline(settings: Settings, now: float) -> Source:
    """The token's user's received events. Its URL names the user once its first read has asked
    GitHub who that is. First read a minute on, after the accounts' first syncs have their turn
    (`github connect` makes it due at once)."""
    from starfeed.schedule.github import TIMELINE_POLL

    api = settings.github_api_url.rstrip("/")
    return Source(source_id=source_id_for(f"{api}/received_events"), url=f"{api}/user", kind=KIND.name,
                  created_at=now, title="GitHub timeline", next_check_at=now + TIMELINE_POLL,
                  root_domain=root_domain_of(api) or None)
