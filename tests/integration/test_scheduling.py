"""Leases, failure policies and CLI verbs (docs/design.md#leases, docs/design.md#failure-policy) through the
local stack."""

import json
import threading
import time

from starfeed.cli import main
from starfeed.fetch.job import fetch_source
from starfeed.sources import add_source

from origin import Reply, rss


def subscribe(storage, url, **options):
    return add_source(storage, url, time.time() - 3600, **options)[0]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def fetch_queue_bodies(stack):
    """What the scheduler enqueued (received and released again for the fetcher)."""
    sqs, url = stack.sqs, stack.queue("FetchQueue")
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=0).get("Messages", [])
    return [json.loads(m["Body"]) for m in messages]


def test_two_scheduler_runs_at_once_lease_each_source_once(stack, storage, origin):
    # Every run looks at one moment: once nothing else is due then, the count below is of this
    # test's sources alone (CI once counted another test's source that came due meanwhile).
    now = time.time()
    for _ in range(5):
        if not stack.run_cycle(now).get("leased"):
            break
    sources = [subscribe(storage, origin.serve(f"/race{n}.xml", Reply(200, rss(("r", "R"))))) for n in range(6)]
    reports = []
    threads = [threading.Thread(target=lambda: reports.append(stack.functions["SchedulerFunction"].module.run_tick(
        stack.functions["SchedulerFunction"].module.storage, now))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(r.leased for r in reports) == len(sources)
    stack.drain()
    assert all(len(origin.hits(f"/race{n}.xml")) == 1 for n in range(6))


def test_a_redelivered_message_does_not_fetch_twice(stack, storage, origin):
    url = origin.serve("/redelivered.xml", Reply(200, rss(("x", "X"))))
    source = subscribe(storage, url)
    stack.run_cycle()  # leased, fetched, lease released
    assert storage.sources.get(source.source_id).locked_until is None
    old_lease = time.time() - 100
    assert fetch_source(storage, source.source_id, lease=old_lease) is None  # the redelivery
    assert len(origin.hits("/redelivered.xml")) == 1


def test_a_dead_fetchers_lease_expires_and_is_taken_over(stack, storage, origin):
    url = origin.serve("/orphan.xml", Reply(200, rss(("o", "O"))))
    source = subscribe(storage, url)
    now = time.time()
    assert storage.sources.take_lease(source.source_id, now) is not None  # then the fetcher dies
    assert storage.sources.take_lease(source.source_id, now + 1) is None  # still held
    later = now + storage.settings.lease_seconds + 1
    assert storage.sources.take_lease(source.source_id, later) is not None  # expired: taken over


def test_decisions_are_recorded_and_listed(stack, storage, capsys, origin):
    url = origin.serve("/decided.xml", Reply(200, rss(("d1", "D1"), ("d2", "D2"), ("d3", "D3"))))
    source = subscribe(storage, url)
    stack.run_cycle()
    stored = storage.sources.get(source.source_id)
    assert stored.decisions[0]["reason"] == "rhythm"
    assert stored.decisions[0]["before"] == 0 and stored.decisions[0]["after"] == stored.interval
    assert stored.ewma_interarrival == 60 and len(stored.publications) == 3
    assert sum(stored.hour_counts) == 3  # the rhythm learned from the three posts
    # A post a minute: a check comes before about five new posts, well within the default interval.
    row = next(r for r in run(capsys, "source", "list", "--wide")[1].splitlines() if r.startswith(source.source_id))
    assert storage.settings.min_interval <= stored.interval < storage.settings.default_interval
    assert " rhythm " in row and " high " in row


def test_sync_enable_disable_polling_and_policy(stack, storage, capsys, origin):
    url = origin.serve("/verbs.xml", Reply(500))
    source = subscribe(storage, url)
    sid = source.source_id
    assert run(capsys, "source", "policy", sid, "one-strike")[0] == 0
    stack.run_cycle()
    dead = storage.sources.get(sid)
    assert (dead.status, dead.next_check_at, dead.reason) == ("dead", None, "one-strike")
    assert sid not in storage.sources.due_ids(time.time() + 10 ** 9)
    assert run(capsys, "source", "disable", sid)[0] == 0
    code, _, err = run(capsys, "source", "sync", sid)
    assert code == 1 and "disabled" in err
    assert run(capsys, "source", "enable", sid)[0] == 0
    assert storage.sources.get(sid).next_check_at is None  # enabling does not schedule
    assert run(capsys, "source", "sync", sid)[0] == 0
    synced = storage.sources.get(sid)
    assert synced.last_error is None and synced.consecutive_failures == 0
    assert sid in storage.sources.due_ids(time.time() + 1)
    assert run(capsys, "source", "polling", sid, "off")[0] == 0 and not storage.sources.get(sid).polling
    assert run(capsys, "source", "sync", "nosuchsource")[0] == 1


def test_a_host_allowed_several_groups_gets_them(stack, storage):
    from starfeed.model import Source
    from starfeed.schedule.dispatch import message_group

    settings = storage.settings
    groups = {message_group(Source(source_id=f"{n:012x}", url=f"https://api.github.com/users/u{n}/starred"), settings)
              for n in range(50)}
    assert groups == {f"api.github.com#{n}" for n in range(5)}
    assert message_group(Source(source_id="a", url="https://example.org/feed"), settings) == "example.org"


def test_a_429_pauses_every_source_on_the_host_not_only_the_one_that_got_it(stack, storage, origin):
    stack.run_cycle()
    # "127.1" is 127.0.0.1 spelled as a host of its own, so the pause touches no other test.
    limited = subscribe(storage, origin.serve("/limited.xml", Reply(429, headers={"Retry-After": "7200"})
                                              ).replace("127.0.0.1", "127.1"))
    sibling = subscribe(storage, origin.serve("/sibling.xml", Reply(200, rss(("s", "S")))
                                              ).replace("127.0.0.1", "127.1"))
    other_host = subscribe(storage, origin.serve("/elsewhere.xml", Reply(200, rss(("e", "E")))))
    now = time.time()
    fetch_source(storage, limited.source_id, now=now)
    assert 7190 <= storage.hosts.paused({limited.host}, now)[limited.host].until - now <= 7200
    assert fetch_source(storage, sibling.source_id, now=now) is None  # held by the fetcher
    held = storage.sources.get(sibling.source_id)
    assert held.reason == "host-paused" and held.next_check_at >= now + 7190
    assert not origin.hits("/sibling.xml")
    # The scheduler holds the host's sources too, and lets other hosts through.
    storage.sources.change(sibling.source_id, {"next_check_at": now - 1})
    stack.run_cycle()
    assert not origin.hits("/sibling.xml") and origin.hits("/elsewhere.xml")
    assert storage.sources.get(sibling.source_id).next_check_at >= now + 7190
    assert storage.sources.get(other_host.source_id).status == "ok"


def test_a_host_item_edited_by_hand_holds_nothing_and_stops_no_run(stack, storage, origin):
    github, now = storage.settings.github_host, time.time()
    storage.hosts.pause("paused.example", now + 600, "Retry-After")
    table = storage.settings.hosts_table
    storage.client("dynamodb").put_item(TableName=table, Item={
        "host": {"S": github}, "paused_until": {"S": "soon"}, "rate_limit": {"S": "{nope"}, "expires_at": {"N": "0"}})
    try:
        assert set(storage.hosts.paused({github, "paused.example"}, now)) == {"paused.example"}
        source = subscribe(storage, origin.serve("/past-a-bad-host.xml", Reply(200, rss(("b", "B")))))
        stack.run_cycle()  # every run reads the GitHub host's pause: this one fetches all the same
        assert storage.sources.get(source.source_id).status == "ok"
        storage.sources.delete(source.source_id)
    finally:
        storage.client("dynamodb").delete_item(TableName=table, Key={"host": {"S": github}})
        storage.client("dynamodb").delete_item(TableName=table, Key={"host": {"S": "paused.example"}})


def test_corrupt_scheduling_state_gets_the_default_interval_not_a_crash(stack, storage, origin):
    url = origin.serve("/corrupt.xml", Reply(200, rss(("c", "C"))))
    source = subscribe(storage, url)
    storage.sources.change(source.source_id, {"publications": ["not a time", None]})
    outcome = fetch_source(storage, source.source_id)
    stored = storage.sources.get(source.source_id)
    assert outcome is not None and stored.reason.startswith("default: stored state unusable")
    assert stored.interval == storage.settings.default_interval and stored.next_check_at > time.time()


def daily_posts(count: int, newest: float) -> bytes:
    """A feed posting about once a day (every 25 hours, so at every hour of the day in turn)."""
    items = "".join(
        f"<item><title>P{n}</title><link>https://example.org/p{n}</link><guid>p{n}</guid>"
        f"<pubDate>{time.strftime('%a, %d %b %Y %H:%M:%S GMT', time.gmtime(newest - 25 * 3600 * n))}</pubDate></item>"
        for n in range(count))
    return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Daily</title><link>https://example.org/</link>'
            f"<description>d</description>{items}</channel></rss>").encode()


def test_the_scheduler_steps_the_pace_hourly_and_fetchers_decide_by_it(stack, storage, origin, capsys):
    from starfeed.model import Pace
    from starfeed.schedule.tick import update_pace
    from starfeed.store import Storage

    stack.run_cycle()
    stored = storage.pace.load()
    assert stored is not None  # the local scheduler's first run computed one
    later = max(stored[1], time.time()) + 3600
    storage.pace.note_run(stored[1] - 1, 1, 1)  # the last lease came before the last step
    assert update_pace(storage, later) is None  # idle since: no step, and no Scan of the sources
    storage.pace.note_run(later - 1, 1, 1)
    stepped = update_pace(storage, later)
    assert stepped is not None and storage.pace.load() == (stepped, later)
    assert update_pace(storage, later + 60) is None  # once an hour
    assert stack.functions["SchedulerFunction"].module.run_tick(storage, time.time()).pace_horizon is None
    stack.drain()
    # Two scheduler runs stepping at once: one step lands.
    assert [storage.pace.save(stepped, later + 3600, later) for _ in range(2)] == [True, False]

    url = origin.serve("/daily.xml", Reply(200, daily_posts(20, time.time() - 3600)))
    source = subscribe(storage, url)

    def next_wait(pace: Pace, at: float) -> float:
        storage.pace.save(pace, at, storage.pace.load()[1])
        now = time.time()
        fetch_source(Storage(storage.settings), source.source_id, now=now)  # a fetcher with no cached pace
        stored = storage.sources.get(source.source_id)
        assert stored.reason == "rhythm"
        return stored.next_check_at - now

    # A post a day: the square root rule alone waits about 13 hours; a 1-hour horizon caps that.
    assert next_wait(Pace(3600.0, 0.5, 40000.0), later + 7200) < 4 * 3600
    assert "pace: an active source waits at most 1h beyond its quiet hours; active from 0.50 posts a day;" \
        in run(capsys, "source", "list", "--wide")[1]
    assert next_wait(Pace(20 * 3600.0, 0.5, 200000.0), later + 7300) > 10 * 3600
    # The rest of the session keeps the starting pace: this test's paces touch no other test.
    storage.pace.save(storage.settings.initial_pace(), time.time() + 10 ** 8, storage.pace.load()[1])
