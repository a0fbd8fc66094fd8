"""The received-events timeline as hints (docs/design.md#github-timeline). Which stars are new in a read, when a read
goes on to the next page, what a gap means, and how an announced account is polled."""

import json

from starfeed.model import GitHubAccount, Source, TimelineState
from starfeed.parse.github import Event, events_of
from starfeed.schedule.github import TIMELINE_POLL, account_checked, reads_on, timeline_checked, timeline_step
from starfeed.settings import Settings
from starfeed.store.records import typed


def star(event_id: int, actor: int = 7) -> Event:
    return Event(event_id, "WatchEvent", actor)


def push(event_id: int, actor: int = 7) -> Event:
    return Event(event_id, "PushEvent", actor)


def test_events_are_read_from_github_s_shape_and_hostile_items_are_dropped():
    body = json.dumps([
        {"id": "22249084964", "type": "WatchEvent", "actor": {"id": 583231, "login": "octocat"},
         "repo": {"id": 1, "name": "octo/hello"}, "payload": {"action": "started"}, "public": True,
         "created_at": "2026-11-26T10:00:00Z"},
        {"id": "22249084963", "type": "PushEvent", "actor": {"id": True, "login": "../etc"}, "payload": {}},
        {"id": "not a number", "type": "WatchEvent", "actor": {"id": 1, "login": "a"}},
        {"id": "5", "type": "WatchEvent", "actor": {"id": 2, "login": "b"}, "payload": {"action": "stopped"}},
        "a string", {"type": 3}])
    events = events_of(body.encode())
    assert events[0] == Event(22249084964, "WatchEvent", 583231) and events[0].is_star
    assert events[1] == Event(22249084963, "PushEvent", None)  # a bool is no id
    assert not events[2].is_star and len(events) == 3


def test_the_first_read_is_a_baseline_and_hints_nothing():
    step = timeline_step([star(30), push(20), star(10, actor=8)], None, reached_end=True)
    assert step.starred == () and step.newest_id == 30 and step.watch_ids == (30, 10) and not step.overflowed


def test_a_star_newer_than_the_last_read_is_hinted_once():
    previous = TimelineState(newest_id=30, watch_ids=[30, 10])
    step = timeline_step([star(50, actor=9), push(40), star(30), push(20)], previous, reached_end=False)
    assert step.starred == (9,) and step.newest_id == 50 and not step.overflowed
    again = timeline_step([star(50, actor=9), push(40), star(30)],
                          TimelineState(newest_id=50, watch_ids=list(step.watch_ids)), reached_end=False)
    assert again.starred == ()


def test_a_star_github_showed_late_is_hinted_though_older_than_the_last_read():
    previous = TimelineState(newest_id=30, watch_ids=[30])
    step = timeline_step([push(40), star(30), star(25, actor=11), push(20)], previous, reached_end=False)
    assert step.starred == (11,)


def test_a_read_that_reaches_no_event_of_the_last_one_has_a_gap():
    previous = TimelineState(newest_id=30, watch_ids=[])
    assert timeline_step([push(n) for n in range(400, 100, -1)], previous, reached_end=False).overflowed
    # The end of the timeline (fewer than 300 events in 90 days) is no gap.
    assert not timeline_step([push(40)], previous, reached_end=True).overflowed
    assert not timeline_step([push(40), push(30)], previous, reached_end=False).overflowed


def test_the_next_page_is_read_only_while_a_whole_page_is_new():
    previous = TimelineState(newest_id=30)
    assert reads_on([push(50), push(31)], previous)
    assert not reads_on([push(50), push(30)], previous)
    assert not reads_on([push(50)], None)  # a baseline reads one page
    assert not reads_on([], previous)


def source(**account) -> Source:
    return Source(source_id="s", url="https://api.github.com/users/x/starred", kind="github-user",
                  github=GitHubAccount(login="x", **account))


def test_an_account_the_timeline_announces_is_polled_daily_and_keeps_its_ema_and_tier():
    settings, now = Settings(), 1_800_000_000.0
    times = [now - 3 * 3600, now - 2 * 3600, now - 3600]  # a star an hour: EMA 60 min, tier high
    plain = account_checked(source(), times, 3, now, settings)
    covered = account_checked(source(timeline_covered=True), times, 3, now, settings)
    assert plain.interval == 3600 and plain.tier == "high"
    assert covered.interval == settings.github_max_minutes * 60 and covered.tier == "high"
    assert covered.ewma == plain.ewma and "timeline announces its stars" in covered.reason


def test_the_timeline_reads_at_github_s_poll_interval_never_faster_than_a_minute():
    settings, now = Settings(), 1_800_000_000.0
    timeline = Source(source_id="t", url="https://api.github.com/users/me/received_events", kind="github-timeline")
    assert timeline_checked(timeline, now, settings).interval == TIMELINE_POLL
    timeline.timeline = TimelineState(poll_interval=120)
    decision = timeline_checked(timeline, now, settings)
    assert decision.interval == 120 and decision.next_check_at == now + 120
    assert "X-Poll-Interval: 120s" in decision.reason
    timeline.timeline = TimelineState(poll_interval=5)
    assert timeline_checked(timeline, now, settings).interval == TIMELINE_POLL


def test_a_read_without_the_known_stars_keeps_them_known_and_an_event_listed_twice_counts_once():
    previous = TimelineState(newest_id=30, watch_ids=[30])
    empty = timeline_step([], previous, reached_end=True)
    assert empty.starred == () and 30 in empty.watch_ids
    again = timeline_step([star(30)], TimelineState(newest_id=30, watch_ids=list(empty.watch_ids)), reached_end=True)
    assert again.starred == ()
    assert timeline_step([star(40, actor=9), star(40, actor=9), star(30)], previous, reached_end=False).starred == (9,)


def test_a_hostile_id_is_no_event():
    body = json.dumps([{"id": "9" * 50, "type": "WatchEvent", "actor": {"id": 1, "login": "a"}},
                       {"id": "1" * 4000, "type": "PushEvent"}, {"id": "-5", "type": "PushEvent"},
                       {"id": 12, "type": "PushEvent"}])
    assert [e.event_id for e in events_of(body.encode())] == [12]


def test_the_next_read_counts_from_the_run_that_leased_the_timeline_and_waits_an_hour_at_most():
    settings, now = Settings(), 1_800_000_000.0
    leased = Source(source_id="t", url="https://api.github.com/users/me/received_events", kind="github-timeline",
                    locked_until=now - 7 + settings.lease_seconds)  # leased by a run 7 s ago
    assert timeline_checked(leased, now, settings).next_check_at == now - 7 + 60
    leased.timeline = TimelineState(poll_interval=100000)
    assert timeline_checked(leased, now, settings).interval == 3600


def test_a_timeline_state_edited_by_hand_is_read_as_far_as_it_can_be():
    settings, now = Settings(), 1_800_000_000.0
    # As storage reads the item back (store/records.typed): what is not of its type is left out.
    broken = typed(TimelineState | None, {"newest_id": "not a number", "watch_ids": [["x"]], "poll_interval": "soon",
                                          "hinted": None})
    assert broken == TimelineState() and typed(TimelineState | None, ["a list"]) is None
    assert timeline_step([star(40)], broken, reached_end=True).starred == ()  # a baseline again
    assert not reads_on([push(50)], broken)
    timeline = Source(source_id="t", url="https://api.github.com/users/me/received_events", kind="github-timeline",
                      timeline=broken)
    assert timeline_checked(timeline, now, settings).interval == TIMELINE_POLL
