"""Issue 4's benchmark: an account following 500 people, over a simulated week, against the simulated
GitHub API on loopback (real HTTP, real ETags, real rate-limit headers).

The code under test is starfeed's own: the GitHub client, read_following, read_stars (conditional
first page, stop at a known star), and decide_github (seed 000's EMA and its clamps). Only storage is
a dictionary here, so a week of polling runs in about a minute; the scheduler ticks every 5 minutes
(the deployed default) on a simulated clock, which the simulated API shares.

Run: python -m starfeed.bench.github [--users 500] [--days 7] [--json]
It prints requests per hour (the floor: GitHub's 5,000) and the share of steady-state requests
answered 304 (the floor: 80%).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter

from starfeed.fetch.github import GitHub, read_following, read_stars
from starfeed.fetch.record import apply_decision
from starfeed.local.github_sim import LIMIT, WINDOW, GitHubSim, population
from starfeed.model import Source, Status
from starfeed.parse.github import star_uid
from starfeed.schedule.github import decide_github
from starfeed.settings import Settings

TICK = 300
DAY = 86400
START = 1_795_000_000.0  # a fixed Monday-ish epoch: the same population every run


def run(users: int, days: int, seed: int = 11) -> dict:
    clock, rng = [START], random.Random(seed)
    sim = GitHubSim(population(users, START - 30 * DAY, START + days * DAY, seed=seed), clock=lambda: clock[0])
    settings = Settings(github_api_url=sim.url, allow_private_networks="1", retry_backoff=0.0)
    github = GitHub(settings, lambda force: sim.token, clock=lambda: clock[0])
    try:
        following = read_following(github)
        state = {a.login: Source(source_id=str(a.user_id), url="", login=a.login, status="new",
                                 next_check_at=START) for a in following.accounts}
        known: dict[str, set[str]] = {login: set() for login in state}
        delays: list[float] = []
        paused_until = 0.0
        while clock[0] < START + days * DAY:
            now = clock[0]
            if now >= paused_until:
                for login, user in state.items():
                    if user.next_check_at > now:
                        continue
                    read = read_stars(github, login, user.etag, None, lambda uids, k=known[login]: set(uids) & k,
                                      first_sync=user.status == Status.NEW, now=now,
                                      last_starred_at=user.last_starred_at)
                    if read.verdict.kind == "rate-limited":
                        paused_until = read.verdict.until
                        user.next_check_at = paused_until
                        break
                    if read.verdict.kind not in ("ok", "not-modified"):
                        user.next_check_at = now + (user.interval or 3600)
                        continue
                    if user.status != "new":  # history is not a delay
                        delays.extend(now - s.starred_epoch for s in read.stars)
                    known[login].update(star_uid(login, s) for s in read.stars)
                    user.publications = sorted(set(user.publications) | {s.starred_epoch for s in read.stars})
                    user.etag, user.status = read.etag or user.etag, Status.OK
                    user.last_starred_at = max([s.starred_at for s in read.stars] + [user.last_starred_at or ""])
                    apply_decision(user, decide_github(user, "ok", None, user.publications, len(read.stars), now,
                                                       settings, rng), now, settings)
            if now % DAY == 0 and now > START:
                read_following(github)  # the daily re-sync of the follow list
            clock[0] += TICK
        return _report(sim, state, delays, users, days)
    finally:
        sim.close()


def _report(sim: GitHubSim, state: dict, delays: list[float], users: int, days: int) -> dict:
    per_hour = Counter(int(e["at"] // WINDOW) for e in sim.log)
    steady = [e for e in sim.log if e["at"] >= START + DAY and "/starred" in e["path"]]
    not_modified = sum(1 for e in steady if e["status"] == 304)
    counted = [sim.counted_in(hour) for hour in per_hour]
    delays.sort()
    tiers = Counter(user.tier or "low" for user in state.values())
    return {"users": users, "days": days, "requests": len(sim.log),
            "requests_per_hour_mean": round(len(sim.log) / (days * 24), 1),
            "requests_per_hour_max": max(per_hour.values()),
            "rate_limited_requests_per_hour_max": max(counted),
            "limit_per_hour": LIMIT,
            "steady_state_requests": len(steady),
            "not_modified_share": round(not_modified / len(steady), 3) if steady else None,
            "star_delay_p50_min": round(_percentile(delays, 0.5) / 60, 1),
            "star_delay_p95_min": round(_percentile(delays, 0.95) / 60, 1),
            "stars_seen": len(delays),
            "tiers": dict(tiers), "status_counts": dict(Counter(e["status"] for e in sim.log))}


def _percentile(values: list[float], fraction: float) -> float:
    return values[min(len(values) - 1, math.ceil(fraction * len(values)) - 1)] if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m starfeed.bench.github", description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.users, args.days, args.seed)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{report['users']} followed accounts over {report['days']} simulated days: "
          f"{report['requests']} requests")
    print(f"requests per hour: mean {report['requests_per_hour_mean']}, max {report['requests_per_hour_max']} "
          f"= {report['requests_per_hour_max'] / LIMIT:.3f}x GitHub's {LIMIT:,} (floor: <= 1.0x)")
    print(f"steady state (after day 1): {report['steady_state_requests']} star requests, "
          f"{report['not_modified_share']:.1%} answered 304 = "
          f"{report['not_modified_share'] / 0.8:.2f}x the 80% floor (>= 1.0x)")
    print(f"a new star reached the feed after p50 {report['star_delay_p50_min']} min, "
          f"p95 {report['star_delay_p95_min']} min ({report['stars_seen']} stars); tiers {report['tiers']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
