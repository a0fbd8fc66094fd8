"""Replay a population of feeds against schedulers with a simulated clock (docs/design.md#target-scheduling).

    python -m starfeed.bench.schedsim --population FILE [--days N] [--json]
    python -m starfeed.bench.schedsim --population FILE --frontier
    python -m starfeed.bench.schedsim --generate FILE [--feeds 10000] [--days 30] [--seed 1]
        [--push-share 0.15]

Population file, JSON lines: first {"start": EPOCH, "end": EPOCH}, then one feed per line:
{"id", "host", "published": [ascending epochs], "validators": bool, "ttl_minutes": int|null,
 "retry_after": [[start, end], ...], "failures": [[start, end], ...], "push": bool (optional)}.

A fetch at t sees the feed's latest 20 publications at or before t (those before start are
history: visible at the first fetch, not counted). Inside a retry_after window it gets 429 with
Retry-After = window end - t; inside a failures window, 500; with validators and nothing new,
304; else 200. Fetches happen on the scheduler's tick (the deployed default, 5 minutes).
A publication's delay runs to the first successful fetch at or after it (end - publication if
none); within_2x_share is the freshness SLO (docs/design.md#slos): the share of fetches that came within twice the wait
the scheduler chose. A feed with "push" has a WebSub hub: under `starfeed+push` each of its posts
arrives HUB_LATENCY after publication, as a push (counted apart, not a fetch), and the feed is
polled by the daily safety check. The other schedulers poll it like any feed.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import random
import sys
from dataclasses import dataclass, field, replace

from starfeed.model import FetchOutcome, Pace, Source
from starfeed.schedule.decide import decide
from starfeed.schedule.pace import EVERY as PACE_EVERY
from starfeed.schedule.pace import MINIFLUX_CLAMPS, entry_frequency_interval, next_pace
from starfeed.settings import Settings
from starfeed.websub.subscription import SAFETY_CHECK

TICK = 300  # template.yaml's ScheduleRate default: rate(5 minutes)
VISIBLE = 20
DAY, MONTH = 86400, 30 * 86400
HUB_LATENCY = 5  # seconds from publication to a hub's push


class BadPopulation(ValueError):
    pass


@dataclass
class Feed:
    id: str
    host: str
    published: list[float]
    validators: bool = True
    ttl_minutes: int | None = None
    retry_after: list[tuple[float, float]] = field(default_factory=list)
    failures: list[tuple[float, float]] = field(default_factory=list)
    push: bool = False  # its hub pushes every post (WebSub)


def read_population(lines) -> tuple[float, float, list[Feed]]:
    """Parse a population; a malformed line is reported with its number."""
    start = end = None
    feeds = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if start is None:
                start, end = float(record["start"]), float(record["end"])
                if end <= start:
                    raise ValueError("end must come after start")
                continue
            published = [float(p) for p in record["published"]]
            if published != sorted(published):
                raise ValueError("published must be ascending")
            feeds.append(Feed(str(record["id"]), str(record["host"]), published, bool(record["validators"]),
                              record.get("ttl_minutes"),
                              [(float(a), float(b)) for a, b in record.get("retry_after") or []],
                              [(float(a), float(b)) for a, b in record.get("failures") or []],
                              bool(record.get("push", False))))
        except (ValueError, KeyError, TypeError) as exc:
            raise BadPopulation(f"line {number}: {type(exc).__name__}: {exc}") from None
    if start is None:
        raise BadPopulation("line 1: the population is empty (expected {\"start\", \"end\"})")
    return start, end, feeds


def _window_end(windows: list[tuple[float, float]], t: float) -> float | None:
    for a, b in windows:
        if a <= t < b:
            return b
    return None


@dataclass
class Tally:
    fetches: int = 0
    not_modified: int = 0
    new_entries: int = 0
    within_2x: int = 0
    gaps: int = 0
    pushes: int = 0
    delays: list[float] = field(default_factory=list)


# Schedulers: each gives the wait after a fetch, from what that fetch returned ---------------

class Starfeed:
    """The deployed decision, with the scheduler's hourly pace (schedule/pace.py) recomputed
    from every simulated source's state, as the scheduler does from the sources table."""

    name = "starfeed"
    pace_every = PACE_EVERY  # as the scheduler steps it
    settings = Settings()
    push = False  # whether feeds with a hub get their posts pushed

    def __init__(self, feed: Feed, rng: random.Random):
        self.source, self.rng, self.pace = Source(source_id=feed.id, url=f"https://{feed.host}/"), rng, None
        self.pushed = self.push and feed.push

    def wait(self, t, status, new, visible, retry_after, ttl, seen):
        outcome = FetchOutcome(status, new_entries=len(new), not_modified=status == 304,
                               error=None if status in (200, 304) else f"HTTP {status}",
                               retry_after=retry_after, ttl_minutes=ttl, publications=tuple(visible))
        d = decide(self.source, outcome, self.settings, t, self.rng, self.pace)
        s = self.source
        s.interval, s.consecutive_failures, s.ewma_interarrival = d.interval, d.consecutive_failures, d.ewma
        s.publications, s.hour_counts = list(d.publications), list(d.hour_counts)
        wait = (d.next_check_at or t + d.interval) - t
        # websub.subscription.safety_poll_at: a pushed feed's next poll is a day away, or later.
        return max(wait, SAFETY_CHECK) if self.pushed else wait

    @classmethod
    def repace(cls, schedulers: list[Starfeed], pace: Pace, t: float) -> Pace:
        pace = next_pace(pace, [s.source.publications for s in schedulers], cls.settings, t)
        for scheduler in schedulers:
            scheduler.pace = pace
        return pace

    @classmethod
    def variant(cls, name: str, push: bool = False, **settings) -> type[Starfeed]:
        """The same scheduler under other settings, or with pushes."""
        return type(cls.__name__, (cls,), {"name": name, "push": push,
                                           "settings": replace(cls.settings, **settings)})


class Fixed15:
    name = "fixed-15m"

    def __init__(self, feed, rng):
        pass

    def wait(self, t, status, new, visible, retry_after, ttl, seen):
        return 900.0


class MinifluxEntryFrequency:
    """Miniflux v2: clamp(10080 / weekly, 5, 1440) minutes, 1440 when weekly is 0; weekly =
    ceil(one week / average gap) over publications seen in the last 7 days; ttl and Retry-After
    as floors, and 1440 minutes at most in the end, as Miniflux caps them."""

    name = "miniflux-entry-frequency"

    def __init__(self, feed, rng):
        pass

    def wait(self, t, status, new, visible, retry_after, ttl, seen):
        # Miniflux's own clamps, 5 and 1440 minutes, whatever starfeed's settings are.
        wait = max(entry_frequency_interval(seen, t), (ttl or 0) * 60, retry_after or 0)
        return min(wait, MINIFLUX_CLAMPS[1])


class NewsBlur:
    """NewsBlur's stories-per-month schedule for a feed with one subscriber: at least a story a
    day, 60 minutes; fewer, 720 - 720 x stories-per-day; none, a day per month since the last."""

    name = "newsblur"

    def __init__(self, feed, rng):
        pass

    def wait(self, t, status, new, visible, retry_after, ttl, seen):
        per_day = (len(seen) - bisect.bisect_left(seen, t - MONTH)) / 30.0
        if per_day >= 1:
            minutes = 60.0
        elif per_day > 0:
            minutes = 720 - per_day * 720
        else:
            months = (t - seen[-1]) / MONTH if seen else 1
            minutes = 1440 * max(1.0, months)
        return max(minutes * 60, retry_after or 0)


# The oracle: a bound, not a scheduler ------------------------------------------------------

BIN = TICK  # the oracle's resolution of a feed's day


def oracle(feeds: list[Feed], start: float, end: float, horizon: float, longest: float = DAY,
           tail: float = 0.05) -> type:
    """A scheduler that knows each feed's true rate and hour-of-day profile over the replay (not
    when its posts come) and makes the fewest checks for which the expected share of posts
    waiting beyond `horizon` is `tail`, so its p95 is about `horizon`. A feed gets k checks a day
    `horizon` apart through its busiest hours and one long gap over its quietest stretch, whose
    posts are the late ones; or, when `longest` is beyond a day, one check every `longest` at the
    end of its busiest hours. Each feed's plan minimizes checks + price x late posts, the price
    the lowest that keeps late posts within the tail (the Lagrangian of the linear program), and
    what is left of the tail goes to the cheapest savings."""
    days, bins, span = (end - start) / DAY, DAY // BIN, max(1, round(horizon / BIN))
    choices, posts = [], 0.0
    for feed in feeds:
        day = [0.0] * bins  # expected posts a day, by BIN of the UTC day
        for published in feed.published:
            if start <= published < end:
                day[int(published % DAY // BIN)] += 1 / days
        choices.append(_plans(day, span, longest))
        posts += sum(day)
    plans = {feed.id: plan[2] for feed, plan in zip(feeds, _cheapest(choices, tail * posts))}

    class Oracle:
        name = "oracle"

        def __init__(self, feed, rng):
            self.period, self.times = plans[feed.id]

        def wait(self, t, status, new, visible, retry_after, ttl, seen):
            phase = t % self.period
            return max(min((at - phase) % self.period or self.period for at in self.times), retry_after or 0)

    return Oracle


def _plans(day: list[float], span: int, longest: float) -> list[tuple[float, float, tuple]]:
    """A feed's plans: (checks a day, late posts a day, (period, checks' times in the period))."""
    bins, doubled = len(day), day + day
    prefix = [0.0]
    for posts in doubled:
        prefix.append(prefix[-1] + posts)

    def stretch(length: int, pick) -> tuple[float, int]:  # (posts, first bin) of the quietest/busiest
        return pick((prefix[first + length] - prefix[first], first) for first in range(bins))

    plans = []
    for checks in range(1, -(-bins // span) + 1):
        quiet = bins - checks * span
        if quiet <= 0:
            plans.append((checks, 0.0, (DAY, tuple(DAY / checks * n for n in range(checks)))))
            break
        late, first = stretch(quiet, min)
        plans.append((checks, late, (DAY, tuple((first + quiet + span * n) % bins * BIN
                                                for n in range(1, checks + 1)))))
    if longest > DAY:
        busiest, first = stretch(span, max)
        cycle = longest / DAY
        plans.append((1 / cycle, sum(day) - busiest / cycle, (longest, ((first + span) % bins * BIN,))))
    return plans


def _cheapest(choices: list[list[tuple]], allowed: float) -> list[tuple]:
    def pick(price: float) -> list[tuple]:
        return [min(plans, key=lambda plan: plan[0] + price * plan[1]) for plans in choices]

    low, high = 0.0, 1e6
    for _ in range(50):
        price = (low + high) / 2
        low, high = (price, high) if sum(plan[1] for plan in pick(price)) > allowed else (low, price)
    chosen = pick(high)
    left = allowed - sum(plan[1] for plan in chosen)
    savings = sorted(((plan[1] - now[1]) / (now[0] - plan[0]), n, plan)
                     for n, (plans, now) in enumerate(zip(choices, chosen)) for plan in plans if plan[0] < now[0])
    for _, n, plan in savings:
        if plan[0] < chosen[n][0] and plan[1] - chosen[n][1] <= left:
            left -= plan[1] - chosen[n][1]
            chosen[n] = plan
    return chosen


SCHEDULERS = (Starfeed, Fixed15, MinifluxEntryFrequency, NewsBlur)
StarfeedPush = Starfeed.variant("starfeed+push", push=True)


class Replay:
    """One feed under one scheduler, fetch by fetch on the scheduler's tick, tallied."""

    def __init__(self, feed: Feed, scheduler, start: float, end: float, tally: Tally):
        self.feed, self.scheduler, self.start, self.end, self.tally = feed, scheduler, start, end, tally
        self.t, self.first = start, True
        # Publications at or before start are history: seen, never counted.
        self.seen_upto = self.history_end = self.delivered_upto = bisect.bisect_right(feed.published, start)
        if getattr(scheduler, "pushed", False):  # every later post arrives by push, none by a fetch
            pushed = [p for p in feed.published[self.history_end:] if p < end]
            tally.delays += [min(HUB_LATENCY, end - p) for p in pushed]
            tally.pushes += len(pushed)
            tally.new_entries += len(pushed)
            self.delivered_upto = len(feed.published)

    def run_until(self, stop: float) -> None:
        feed, tally, pubs = self.feed, self.tally, self.feed.published
        while self.t < min(stop, self.end):
            t = self.t
            tally.fetches += 1
            retry_end, failing = _window_end(feed.retry_after, t), _window_end(feed.failures, t)
            retry_after, new, visible = None, [], []
            if retry_end is not None:
                status, retry_after = 429, retry_end - t
            elif failing is not None:
                status = 500
            else:
                upto = bisect.bisect_right(pubs, t)
                new = pubs[self.seen_upto:upto]
                visible = pubs[max(0, upto - VISIBLE):upto]
                status = 304 if feed.validators and not new and not self.first else 200
                tally.not_modified += status == 304
                for p in pubs[max(self.delivered_upto, self.history_end):upto]:
                    tally.delays.append(t - p)
                tally.new_entries += max(0, upto - max(self.delivered_upto, self.history_end))
                self.delivered_upto = max(self.delivered_upto, upto)
                self.seen_upto, self.first = upto, False
            wait = self.scheduler.wait(t, status, new, visible, retry_after, feed.ttl_minutes, pubs[:self.seen_upto])
            following = self.start + math.ceil((t + max(wait, 1) - self.start) / TICK) * TICK
            tally.gaps += 1
            tally.within_2x += following - t <= 2 * max(wait, TICK)
            self.t = following

    def finish(self) -> None:
        for p in self.feed.published[max(self.delivered_upto, self.history_end):]:
            if p < self.end:
                self.tally.delays.append(self.end - p)


def simulate(feeds: list[Feed], scheduler_class, start: float, end: float, rng: random.Random) -> Tally:
    """Replay every feed; a scheduler with a population pace has it recomputed on the hour."""
    tally = Tally()
    schedulers = [scheduler_class(feed, rng) for feed in feeds]
    replays = [Replay(feed, scheduler, start, end, tally) for feed, scheduler in zip(feeds, schedulers)]
    every = getattr(scheduler_class, "pace_every", None)
    pace = scheduler_class.settings.initial_pace() if every else None
    stop = start
    while stop < end:
        stop = min(end, stop + (every or end - start))
        for replay in replays:
            replay.run_until(stop)
        if every:
            pace = scheduler_class.repace(schedulers, pace, stop)
    for replay in replays:
        replay.finish()
    return tally


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run(start: float, end: float, feeds: list[Feed], seed: int = 7) -> dict:
    """Every scheduler on the population; starfeed+push too when some feed has a hub."""
    report = {}
    for scheduler_class in SCHEDULERS + ((StarfeedPush,) if any(f.push for f in feeds) else ()):
        tally = simulate(feeds, scheduler_class, start, end, random.Random(seed))
        report[scheduler_class.name] = {
            "fetches": tally.fetches, "pushes": tally.pushes, "new_entries": tally.new_entries,
            "fetches_per_new_entry": round(tally.fetches / max(1, tally.new_entries), 3),
            "not_modified_share": round(tally.not_modified / max(1, tally.fetches), 3),
            "delay_p50_s": round(percentile(tally.delays, 0.5)),
            "delay_p95_s": round(percentile(tally.delays, 0.95)),
            "delay_p99_s": round(percentile(tally.delays, 0.99)),
            "within_2x_share": round(tally.within_2x / max(1, tally.gaps), 3)}
    return {"schedulers": report}


HORIZON_SHARES = (0.2, 0.3, 0.4, 0.5, 0.6, 0.8)  # starfeed's, on the frontier
ORACLE_SHARES = (0.3, 0.35, 0.4, 0.45)  # the oracle's horizon, x Miniflux's p95


def frontier(start: float, end: float, feeds: list[Feed], seed: int = 7) -> list[dict]:
    """Fetches, p95 and p50 delay, each x Miniflux's: starfeed at several horizon shares and with
    rare sources let wait a week, then the oracle at several horizons, with the one-day
    cap (docs/design.md#clamps) and with a week's."""
    def measured(scheduler_class) -> tuple[float, float, float]:
        tally = simulate(feeds, scheduler_class, start, end, random.Random(seed))
        return tally.fetches, percentile(tally.delays, 0.95), percentile(tally.delays, 0.5)

    miniflux = measured(MinifluxEntryFrequency)

    def row(setting: str, scheduler_class) -> dict:
        return {"setting": setting, **{key: round(value / max(1, base), 3) for key, value, base
                                       in zip(("fetches", "p95", "p50"), measured(scheduler_class), miniflux)}}

    default = Starfeed.settings.horizon_share
    rows = [row(f"starfeed horizon_share {share}" + (" (default)" if share == default else ""),
                Starfeed.variant("starfeed", horizon_share=share)) for share in HORIZON_SHARES]
    rows.append(row(f"starfeed horizon_share {default}, rare_max_interval 7 d",
                    Starfeed.variant("starfeed", rare_max_interval=7 * DAY)))
    for longest in (DAY, 7 * DAY):
        rows += [row(f"oracle, horizon {share} x Miniflux p95, longest {longest // DAY} d",
                     oracle(feeds, start, end, share * miniflux[1], longest)) for share in ORACLE_SHARES]
    return rows


@dataclass(frozen=True)
class Shape:
    """How a generated population looks. The defaults are the realistic one; the others let a
    scheduler be tried on populations unlike the one it was tuned on."""
    median_per_day: float = 1.0  # posts a day of the median feed (log-normal rates)
    spread: float = 1.3  # sigma of the log-normal: larger, a heavier tail both ways
    rhythm: float = 0.8  # share of off-hours posts dropped (0: posts at any hour)
    bursts: float = 0.05  # chance that a post starts a burst of a few more
    push_share: float = 0.0  # share of feeds whose hub pushes (WebSub)


def generate(feeds: int, days: int, seed: int, shape: Shape = Shape()) -> list[str]:
    """A realistic population: heavy-tailed rates (log-normal, median about a post a day), a
    daily rhythm around each feed's own working hours, quieter weekends, bursts, dormant
    feeds, and some failing or rate-limiting hosts."""
    rng = random.Random(seed)
    hubs = random.Random(f"push-{seed}")  # apart, so the rest of the population does not move
    start = 1_790_000_000.0 - 1_790_000_000.0 % DAY
    end = start + days * DAY
    lines = [json.dumps({"start": start, "end": end})]
    for n in range(feeds):
        dormant = rng.random() < 0.1
        per_day = 0.0 if dormant else min(60.0, rng.lognormvariate(math.log(shape.median_per_day), shape.spread))
        peak = rng.uniform(0, 24)
        published, t = [], start - 14 * DAY
        while per_day and t < end:
            t += rng.expovariate(per_day / DAY) * (1.6 if time_weekend(t) else 1.0)
            hour = (t % DAY) / 3600
            # Daily rhythm: most posts within about 5 hours of the feed's peak hour.
            if abs((hour - peak + 12) % 24 - 12) > 5 and rng.random() < shape.rhythm:
                continue
            if t < end:
                published.append(round(t))
                if rng.random() < shape.bursts:  # a burst: a few posts within minutes
                    published += sorted(round(t + rng.uniform(60, 1800)) for _ in range(rng.randint(2, 5)))
        published = sorted(p for p in published if p < end)
        failures = [[s, s + rng.uniform(3600, 2 * DAY)] for s in
                    [start + rng.uniform(0, days * DAY)] if rng.random() < 0.05]
        retry = [[s, s + rng.uniform(600, 6 * 3600)] for s in
                 [start + rng.uniform(0, days * DAY)] if rng.random() < 0.03]
        record = {"id": f"f{n}", "host": f"host{n % 2000}.example", "published": published,
                  "validators": rng.random() < 0.8,
                  "ttl_minutes": rng.choice([60, 120]) if rng.random() < 0.1 else None,
                  "retry_after": retry, "failures": failures}
        if hubs.random() < shape.push_share:
            record["push"] = True
        lines.append(json.dumps(record))
    return lines


def time_weekend(t: float) -> bool:
    return int(t // DAY + 3) % 7 >= 5  # 1970-01-01 was a Thursday


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population")
    parser.add_argument("--days", type=float, help="replay only the first N days")
    parser.add_argument("--json", action="store_true", help="print only the JSON report")
    parser.add_argument("--frontier", action="store_true",
                        help="fetches against p95 delay for several settings and the oracle")
    parser.add_argument("--generate", metavar="FILE", help="write a population instead")
    parser.add_argument("--feeds", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    for name, field_ in Shape.__dataclass_fields__.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=float, default=field_.default,
                            help=f"generated population's shape (default {field_.default})")
    args = parser.parse_args()
    if args.generate:
        shape = Shape(**{name: getattr(args, name) for name in Shape.__dataclass_fields__})
        with open(args.generate, "w") as out:
            out.write("\n".join(generate(args.feeds, int(args.days or 30), args.seed, shape)) + "\n")
        return 0
    if not args.population:
        parser.error("--population FILE (or --generate FILE)")
    try:
        with open(args.population) as lines:
            start, end, feeds = read_population(lines)
    except (BadPopulation, OSError) as exc:
        print(f"schedsim: {args.population}: {exc}", file=sys.stderr)
        return 2
    if args.days:
        end = min(end, start + args.days * DAY)
    if args.frontier:
        rows = frontier(start, end, feeds)
        print(json.dumps(rows) if args.json else "\n".join(
            ["| setting | fetches | p95 delay | p50 delay |", "|---|---|---|---|"]
            + [f"| {r['setting']} | {r['fetches']:.2f}x | {r['p95']:.2f}x | {r['p50']:.2f}x |" for r in rows]))
        return 0
    report = run(start, end, feeds)
    print(json.dumps(report, indent=None if args.json else 1))
    if not args.json:
        print(summary(report["schedulers"]))
    return 0


def summary(schedulers: dict) -> str:
    """The scheduling target (docs/design.md#target-scheduling), checked: starfeed against the
    entry-frequency rule and fixed polling."""
    ours, miniflux = schedulers["starfeed"], schedulers["miniflux-entry-frequency"]
    fetches = ours["fetches"] / max(1, miniflux["fetches"])
    p95 = ours["delay_p95_s"] / max(1, miniflux["delay_p95_s"])
    fixed = ours["fetches"] / max(1, schedulers["fixed-15m"]["fetches"])
    met = fetches <= 0.8 and p95 <= 0.5 and fixed <= 0.25
    return (f"starfeed against miniflux-entry-frequency: {fetches:.3f}x the fetches (goal at most 0.8),"
            f" {p95:.3f}x the p95 delay (goal at most 0.5); {fixed:.1%} of fixed-15m's fetches"
            f" (goal at most 25%): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    sys.exit(main())
