"""The scheduling simulation harness: its population format and its accounting."""

import io
import json
import random

import pytest

from starfeed.bench.schedsim import (
    BadPopulation,
    Feed,
    Fixed15,
    MinifluxEntryFrequency,
    Starfeed,
    generate,
    read_population,
    run,
    simulate,
)

START, END = 1_800_000_000.0, 1_800_000_000.0 + 86400


def population(*feeds: dict) -> io.StringIO:
    return io.StringIO("\n".join([json.dumps({"start": START, "end": END})] + [json.dumps(f) for f in feeds]))


def feed(**fields) -> dict:
    return {"id": "a", "host": "h", "published": [], "validators": True, "ttl_minutes": None,
            "retry_after": [], "failures": [], **fields}


def test_malformed_lines_are_reported_with_their_number():
    with pytest.raises(BadPopulation, match="line 3"):
        read_population(io.StringIO(population(feed()).getvalue() + "\n{not json"))
    with pytest.raises(BadPopulation, match="line 2: .*ascending"):
        read_population(population(feed(published=[3, 2])))
    with pytest.raises(BadPopulation, match="line 1"):
        read_population(io.StringIO(""))


def test_fixed_polling_delays_and_counts():
    posts = [START + 100, START + 3600 + 50]
    tally = simulate([Feed("a", "h", posts)], Fixed15, START, END, random.Random(1))
    assert tally.fetches == 96 and tally.new_entries == 2
    assert sorted(tally.delays) == [800, 850]  # to the next 15-minute fetch after each post


def test_history_is_seen_but_not_counted_and_undelivered_posts_count_to_the_end():
    start, end, (f,) = read_population(population(feed(published=[START - 500, END - 10])))
    tally = simulate([f], MinifluxEntryFrequency, start, end, random.Random(1))
    assert tally.new_entries == 0 and tally.delays == [10]  # fetched daily: never reached


def test_retry_after_windows_answer_429_and_failures_500():
    f = Feed("a", "h", [START + 60], retry_after=[(START, START + 1800)], failures=[])
    tally = simulate([f], Fixed15, START, START + 3600, random.Random(1))
    assert tally.delays == [1740]  # the first successful fetch is the one at the window's end


def test_a_generated_population_runs_through_every_scheduler():
    start, end, feeds = read_population(io.StringIO("\n".join(generate(30, 3, seed=4))))
    report = run(start, end, feeds)["schedulers"]
    assert set(report) == {"starfeed", "fixed-15m", "miniflux-entry-frequency", "newsblur"}
    assert report["fixed-15m"]["fetches"] == 30 * 3 * 96
    assert all(r["new_entries"] <= report["fixed-15m"]["new_entries"] for r in report.values())


def test_the_generator_shape_options_change_the_population():
    from starfeed.bench.schedsim import Shape

    def hours_and_posts(shape):
        _, _, feeds = read_population(io.StringIO("\n".join(generate(40, 10, seed=2, shape=shape))))
        busiest = max(feeds, key=lambda f: len(f.published))
        return len({int(p % 86400 // 3600) for p in busiest.published}), sum(len(f.published) for f in feeds)

    any_hour, _ = hours_and_posts(Shape(rhythm=0.0, median_per_day=5))
    own_hours, _ = hours_and_posts(Shape(rhythm=1.0, median_per_day=5))
    assert any_hour == 24 and own_hours <= 11  # five hours either side of the feed's peak
    assert hours_and_posts(Shape(median_per_day=8))[1] > 3 * hours_and_posts(Shape(median_per_day=1))[1]


def test_starfeeds_pace_is_recomputed_hourly_from_every_simulated_source(monkeypatch):
    """The simulation steps the pace as the scheduler does: on the hour, from all sources at once."""
    from starfeed.bench import schedsim

    steps = []
    real = schedsim.next_pace
    monkeypatch.setattr(schedsim, "next_pace", lambda pace, publications, settings, now: (
        steps.append((now, len(publications))), real(pace, publications, settings, now))[1])
    busy = Feed("b", "h", [START - 3600 * n for n in range(20)][::-1] + [START + 60 * n for n in range(1, 200)])
    simulate([Feed("a", "h", [START + 100]), busy], Starfeed, START, END, random.Random(1))
    assert [now for now, _ in steps] == [START + 3600 * n for n in range(1, 25)]
    assert {count for _, count in steps} == {2}


def test_the_miniflux_baseline_keeps_its_own_clamps_whatever_starfeeds_are(monkeypatch):
    from starfeed.bench import schedsim

    quiet = [Feed("q", "h", [START - 30 * 86400])]  # no post in the last week: 1440 minutes
    before = simulate(quiet, MinifluxEntryFrequency, START, START + 7 * 86400, random.Random(1)).fetches
    monkeypatch.setattr(schedsim.Starfeed, "settings", schedsim.Settings(max_interval=7 * 86400))
    assert simulate(quiet, MinifluxEntryFrequency, START, START + 7 * 86400, random.Random(1)).fetches == before == 7


def test_a_pushed_feeds_posts_arrive_at_once_and_it_is_polled_daily():
    from starfeed.bench.schedsim import HUB_LATENCY, StarfeedPush

    history = [START - 3600 * n for n in range(20, 0, -1)]
    posts = history + [START + 3600 * n + 17 for n in range(1, 24)]
    polled = simulate([Feed("a", "h", posts, push=True)], Starfeed, START, END, random.Random(1))
    pushed = simulate([Feed("a", "h", posts, push=True)], StarfeedPush, START, END, random.Random(1))
    assert pushed.delays == [HUB_LATENCY] * 23 and pushed.pushes == 23 and pushed.new_entries == 23
    assert pushed.fetches == 1 < polled.fetches  # the first check, then the safety check a day on
    assert polled.pushes == 0 and min(polled.delays) > HUB_LATENCY


def test_the_push_share_marks_feeds_and_leaves_the_rest_of_the_population_alone():
    from starfeed.bench.schedsim import Shape

    plain = generate(200, 3, seed=4)
    marked = generate(200, 3, seed=4, shape=Shape(push_share=0.5))
    _, _, feeds = read_population(io.StringIO("\n".join(marked)))
    assert 70 < sum(f.push for f in feeds) < 130
    unmarked = [{key: value for key, value in json.loads(line).items() if key != "push"} for line in marked]
    assert [json.loads(line) for line in plain] == unmarked
    report = run(*read_population(io.StringIO("\n".join(marked))))["schedulers"]
    assert report["starfeed+push"]["pushes"] > 0 and "starfeed+push" not in run(
        *read_population(io.StringIO("\n".join(plain))))["schedulers"]


def test_the_oracle_holds_its_horizon_for_all_but_the_tail():
    from starfeed.bench.schedsim import oracle, percentile

    start, end, feeds = read_population(io.StringIO("\n".join(generate(60, 6, seed=3))))
    for horizon in (3 * 3600, 8 * 3600):
        tally = simulate(feeds, oracle(feeds, start, end, horizon), start, end, random.Random(1))
        assert percentile(tally.delays, 0.9) <= horizon + 300 < percentile(tally.delays, 0.99)
    fewer = simulate(feeds, oracle(feeds, start, end, 8 * 3600), start, end, random.Random(1)).fetches
    assert fewer < simulate(feeds, oracle(feeds, start, end, 3 * 3600), start, end, random.Random(1)).fetches
    week = oracle(feeds, start, end, 8 * 3600, longest=7 * 86400)
    assert simulate(feeds, week, start, end, random.Random(1)).fetches < fewer


def test_the_frontier_has_one_row_per_setting(monkeypatch):
    from starfeed.bench import schedsim

    monkeypatch.setattr(schedsim, "HORIZON_SHARES", (0.3, 0.6))
    monkeypatch.setattr(schedsim, "ORACLE_SHARES", (0.4,))
    start, end, feeds = read_population(io.StringIO("\n".join(generate(20, 2, seed=5))))
    rows = schedsim.frontier(start, end, feeds)
    assert [r["setting"] for r in rows] == [
        "starfeed horizon_share 0.3", "starfeed horizon_share 0.6", "starfeed horizon_share 0.4, rare_max_interval 7 d",
        "oracle, horizon 0.4 x Miniflux p95, longest 1 d", "oracle, horizon 0.4 x Miniflux p95, longest 7 d"]
    assert rows[0]["fetches"] > rows[1]["fetches"] and all(r["p95"] > 0 for r in rows)
