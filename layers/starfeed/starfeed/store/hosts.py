"""Hosts: a pause that holds every source on a host (Retry-After, 429, a refused GitHub token, a
robots.txt Crawl-delay's turn), a host's latest rate limit, and its robots.txt."""

from __future__ import annotations

import logging
from typing import NamedTuple

from pynamodb.exceptions import AttributeDeserializationError, DoesNotExist

from starfeed.store.records import DAY, written

log = logging.getLogger(__name__)
PAUSE_ATTRIBUTES = ["host", "paused_until", "stopped"]  # not the rate limit's or robots.txt's JSON


class Pause(NamedTuple):
    until: float
    stopped: bool  # until someone acts (a refused GitHub token), whatever `until` says


class Hosts:
    def __init__(self, records):
        self._records = records
        # This instance's copies of the hosts' robots.txt answers (fetch/robots.py's `known`),
        # which spare a read per article: they live as long as the function's Storage.
        self.robots_known: dict[str, dict] = {}

    def pause(self, host: str, until: float, reason: str, stopped: bool = False) -> None:
        """Hold every source on a host until `until` (never shortening a longer pause)."""
        H = self._records.Host
        written(lambda: H(host).update(actions=[H.paused_until.set(until), H.reason.set(reason),
                                                H.stopped.set(stopped), H.expires_at.set(int(until) + DAY)],
                                       condition=H.paused_until.does_not_exist() | (H.paused_until < until)))

    def take_turn(self, host: str, now: float, until: float, reason: str) -> float | None:
        """A crawl delay's turn (docs/design.md#crawl-delay): the host held until `until`, taken
        with one conditional write only while nothing holds it at `now`, so that two fetchers,
        on two instances, cannot both take it. None when taken; else when the host is free."""
        H = self._records.Host
        if written(lambda: H(host).update(
                actions=[H.paused_until.set(until), H.reason.set(reason), H.expires_at.set(int(until) + DAY)],
                condition=H.paused_until.does_not_exist() | (H.paused_until <= now))):
            return None
        held = self.pause_of(host, now)
        return held["until"] if held else now  # a pause that ended since: the next try takes it

    def paused(self, hosts: set[str], now: float) -> dict[str, Pause]:
        """The pauses of these hosts that hold at `now`. A host item edited by hand into what
        cannot be read holds nothing, alone, and says so: every run reads the GitHub host's."""
        if not hosts:
            return {}
        H = self._records.Host
        try:
            records = list(H.batch_get(list(hosts), attributes_to_get=PAUSE_ATTRIBUTES))
        except (AttributeDeserializationError, TypeError, ValueError):
            records = [record for host in hosts if (record := self._readable(host)) is not None]
        return {h.host: Pause(h.paused_until, bool(h.stopped)) for h in records if h.paused_until > now}

    def _readable(self, host: str):
        try:
            return self._records.Host.get(host, attributes_to_get=PAUSE_ATTRIBUTES)
        except DoesNotExist:
            return None
        except (AttributeDeserializationError, TypeError, ValueError) as exc:
            log.warning("hosts: the pause of %s cannot be read (%s); it holds nothing", host, exc)
            return None

    def pause_of(self, host: str, now: float) -> dict | None:
        """{until, reason, stopped} while the host is paused, else None."""
        return pause_in(self.state(host), now)

    def clear_pause(self, host: str) -> None:
        H = self._records.Host
        H(host).update(actions=[H.paused_until.set(0), H.reason.remove(), H.stopped.set(False)])

    def note_rate_limit(self, host: str, rate: dict) -> None:
        H = self._records.Host
        # Never shortens the record's life: a stopped pause must outlive any rate-limit note.
        H(host).update(actions=[H.rate_limit.set(rate), H.expires_at.set(H.expires_at | int(rate["reset"]) + DAY)])

    # A host's robots.txt is an item of its own: the scheduler reads the hosts' pauses every run
    # and should not read their robots.txt with them.
    @staticmethod
    def _robots_key(host: str) -> str:
        return f"robots.txt {host}"

    def robots(self, host: str) -> dict | None:
        """The host's cached robots.txt (fetch/robots.py), or None."""
        try:
            return self._records.Host.get(self._robots_key(host), attributes_to_get=["robots"]).robots
        except DoesNotExist:
            return None

    def note_robots(self, host: str, robots: dict) -> None:
        H = self._records.Host
        H(self._robots_key(host)).update(actions=[H.robots.set(robots), H.expires_at.set(int(robots["expires"]) + DAY)])

    def state(self, host: str) -> dict:
        """Everything known about a host: its pause (if any) and its latest rate limit."""
        try:
            record = self._records.Host.get(host, consistent_read=True)
        except DoesNotExist:
            return {}
        return {"paused_until": record.paused_until, "reason": record.reason, "stopped": bool(record.stopped),
                "rate_limit": record.rate_limit}


def pause_in(state: dict, now: float) -> dict | None:
    """A host's pause, from its state (Hosts.state), while it lasts: {until, reason, stopped}."""
    if state.get("paused_until", 0) <= now:
        return None
    return {"until": state["paused_until"], "reason": state["reason"], "stopped": state["stopped"]}
