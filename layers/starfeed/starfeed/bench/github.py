"""The GitHub benchmark (docs/design.md#target-github), with the timeline's hints: an account
following 500 people, over a simulated week, against the simulated GitHub API on loopback (real
HTTP, real ETags, real rate-limit headers).

The code under test is starfeed's own: the GitHub client, read_following, read_stars (conditional
first page, stop at a known star), account_checked (the accounts' EMA and its clamps), and read_timeline
with timeline_step (the received-events hints). Only storage is a dictionary here, so a week of
polling runs in about a minute; the scheduler ticks every 5 minutes (the deployed default) on a
simulated clock, which the simulated API shares.

Two runs on the same population: the star EMA's polling alone (docs/design.md#github-interval),
then with the timeline read every tick, its hints fetched at once, and announced accounts polled
daily. The timeline carries other activity (two events per star) and bursts of 400 events past its
300, and each event shows up after GitHub's lag (mostly under a minute, a tail to 6 h).

Run: python -m starfeed.bench.github [--users 500] [--days 7] [--json]
It prints requests per hour (the floor: GitHub's 5,000), the share of steady-state star requests
answered 304 (the floor: 80%) and the delay of a new star, for both runs (goal: p95 at most 60 min
with the timeline, with no more requests per hour than without).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from dataclasses import replace

from starfeed.fetch.github import GitHub, read_following, read_stars, read_timeline
from starfeed.fetch.record import apply_decision
from starfeed.local.github_sim import LIMIT, WINDOW, GitHubSim, population
from starfeed.model import GitHubAccount, Source, Status, TimelineState
from starfeed.parse.github import Answer, star_uid
from starfeed.schedule.github import account_checked, timeline_step
from starfeed.settings import Settings

TICK = 300
DAY = 86400
START = 1_795_000_000.0  # a fixed Monday-ish epoch: the same population every run
GOAL_P95_MIN = 60


class Follower:
    """The accounts' sources as the fetcher keeps them, with the fetcher's own steps."""

    def __init__(self, github: GitHub, settings: Settings, logins: list, rng: random.Random):
        self.github, self.settings, self.rng = github, settings, rng
        self.users = {a.login: Source(source_id=str(a.user_id), url="", status=Status.NEW, next_check_at=START,
                                      github=GitHubAccount(login=a.login, user_id=a.user_id)) for a in logins}
        self.by_id = {a.user_id: self.users[a.login] for a in logins}
        self.known: dict[str, set[str]] = {login: set() for login in self.users}
        self.delays: list[float] = []
        self.paused_until = 0.0

    def poll(self, user: Source, now: float) -> bool:
        """One star fetch; False when the rate limit stops this tick."""
        account = user.github or GitHubAccount()
        login = account.login
        read = read_stars(self.github, login, user.etag, None, lambda uids, k=self.known[login]: set(uids) & k,
                          first_sync=user.status == Status.NEW, now=now, last_starred_at=account.last_starred_at)
        if read.verdict.answer == Answer.RATE_LIMITED:
            self.paused_until = user.next_check_at = read.verdict.until
            return False
        if not read.verdict.answer.succeeded:
            user.next_check_at = now + (user.interval or 3600)
            return True
        if user.status != Status.NEW:  # history is not a delay
            self.delays.extend(now - s.starred_epoch for s in read.stars)
        if read.stars:
            account = replace(account, timeline_covered=(account.hinted_at or 0) > (user.last_fetch_at or 0))
        self.known[login].update(star_uid(login, s) for s in read.stars)
        user.publications = sorted(set(user.publications) | {s.starred_epoch for s in read.stars})
        user.etag, user.status, user.last_fetch_at = read.etag or user.etag, Status.OK, now
        user.github = replace(account, last_starred_at=max([s.starred_at for s in read.stars]
                                                           + [account.last_starred_at or ""]))
        decision = account_checked(user, user.publications, len(read.stars), now, self.settings)
        apply_decision(user, decision, now, self.settings)
        user.github = replace(user.github, tier=decision.tier)
        return True

    def hint(self, timeline: Source, now: float) -> None:
        """One read of the timeline, as the fetcher's _apply_timeline: the hinted accounts at once."""
        state = timeline.timeline or TimelineState()
        read = read_timeline(self.github, state.login or "", timeline.etag, timeline.timeline)
        timeline.etag = read.etag or timeline.etag
        if read.verdict.answer != Answer.OK:
            return
        step = timeline_step(read.events, timeline.timeline, read.reached_end)
        timeline.timeline = replace(state, newest_id=step.newest_id, watch_ids=list(step.watch_ids))
        if step.overflowed:
            for user in self.users.values():
                if user.github and user.github.timeline_covered:
                    back = now + (user.ewma_interarrival or self.settings.github_default_minutes * 60)
                    user.github = replace(user.github, timeline_covered=False)
                    user.next_check_at = min(user.next_check_at, back)
        for actor in step.active:
            if actor in self.by_id:
                followed = self.by_id[actor]
                followed.github = replace(followed.github or GitHubAccount(), timeline_covered=True)
        for actor in dict.fromkeys(step.starred):
            user = self.by_id.get(actor)
            if user and now >= self.paused_until:
                user.github = replace(user.github or GitHubAccount(), hinted_at=now)
                user.next_check_at = now
                self.poll(user, now)


def run(users: int, days: int, seed: int = 11, timeline: bool = False) -> dict:
    clock, rng = [START], random.Random(seed)
    sim = GitHubSim(population(users, START - 30 * DAY, START + days * DAY, seed=seed), clock=lambda: clock[0])
    sim.generate_activity(START - 30 * DAY, START + days * DAY, seed=seed)
    settings = Settings(github_api_url=sim.url, allow_private_networks="1", retry_backoff=0.0)
    github = GitHub(settings, lambda force: sim.token, clock=lambda: clock[0])
    try:
        follower = Follower(github, settings, read_following(github).accounts, rng)
        reader = Source(source_id="timeline", url="", timeline=TimelineState(login=sim.me)) if timeline else None
        while clock[0] < START + days * DAY:
            now = clock[0]
            if reader and now >= follower.paused_until:
                follower.hint(reader, now)
            if now >= follower.paused_until:
                for user in follower.users.values():
                    if user.next_check_at <= now and not follower.poll(user, now):
                        break
            if now % DAY == 0 and now > START:
                read_following(github)  # the daily re-sync of the follow list
            clock[0] += TICK
        return _report(sim, follower, users, days)
    finally:
        sim.close()


def _report(sim: GitHubSim, follower: Follower, users: int, days: int) -> dict:
    per_hour = Counter(int(e["at"] // WINDOW) for e in sim.log)
    steady = [e for e in sim.log if e["at"] >= START + DAY and "/starred" in e["path"]]
    not_modified = sum(1 for e in steady if e["status"] == 304)
    counted = [sim.counted_in(hour) for hour in per_hour]
    delays = sorted(follower.delays)
    tiers = Counter((user.github and user.github.tier) or "low" for user in follower.users.values())
    return {"users": users, "days": days, "requests": len(sim.log),
            "requests_per_hour_mean": round(len(sim.log) / (days * 24), 1),
            "requests_per_hour_max": max(per_hour.values()),
            "rate_limited_requests_per_hour_max": max(counted),
            "limit_per_hour": LIMIT,
            "timeline_requests": sum(1 for e in sim.log if "/received_events" in e["path"]),
            "steady_state_requests": len(steady),
            "not_modified_share": round(not_modified / len(steady), 3) if steady else None,
            "star_delay_p50_min": round(_percentile(delays, 0.5) / 60, 1),
            "star_delay_p95_min": round(_percentile(delays, 0.95) / 60, 1),
            "stars_seen": len(delays),
            "covered_accounts": sum(1 for u in follower.users.values() if u.github and u.github.timeline_covered),
            "tiers": dict(tiers), "status_counts": dict(Counter(e["status"] for e in sim.log))}


def _percentile(values: list[float], fraction: float) -> float:
    return values[min(len(values) - 1, math.ceil(fraction * len(values)) - 1)] if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m starfeed.bench.github", description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--days", type=float, default=7, help="simulated days (a fraction of one too)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    reports = {name: run(args.users, args.days, args.seed, timeline=name == "timeline")
               for name in ("ema", "timeline")}
    if args.json:
        print(json.dumps(reports, indent=1))
        return 0
    ema, hinted = reports["ema"], reports["timeline"]
    print(f"{args.users} followed accounts over {args.days} simulated days, the same stars twice:")
    for name, report in reports.items():
        label = "the star EMA alone" if name == "ema" else "with the timeline's hints"
        print(f"- {label}: {report['requests']} requests ({report['timeline_requests']} of the timeline)")
        print(f"  requests per hour: mean {report['requests_per_hour_mean']}, max {report['requests_per_hour_max']} "
              f"= {report['requests_per_hour_max'] / LIMIT:.3f}x GitHub's {LIMIT:,} (floor: <= 1.0x)")
        share = report["not_modified_share"]
        print(f"  steady state (after day 1): {report['steady_state_requests']} star requests, " + (
              f"{share:.1%} answered 304 = {share / 0.8:.2f}x the 80% floor (>= 1.0x)" if share is not None
              else "none to answer 304 in a single day"))
        print(f"  a new star reached the feed after p50 {report['star_delay_p50_min']} min, "
              f"p95 {report['star_delay_p95_min']} min ({report['stars_seen']} stars); tiers {report['tiers']}")
    met = (hinted["star_delay_p95_min"] <= GOAL_P95_MIN
           and hinted["requests_per_hour_mean"] <= ema["requests_per_hour_mean"])
    print(f"timeline: p95 {hinted['star_delay_p95_min'] / GOAL_P95_MIN:.2f}x the {GOAL_P95_MIN} min goal, "
          f"{hinted['requests_per_hour_mean'] / ema['requests_per_hour_mean']:.2f}x the requests per hour "
          f"of the EMA alone (goal: both <= 1.0x): {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
