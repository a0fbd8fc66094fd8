"""starfeed status: one screen for an operator: the SLOs (docs/design.md#slos) as measured now,
the queues and their dead letters, sources by status and the failing ones by cause, GitHub's rate
limit, the last scheduler run, the rules and how far stored entries are judged by them."""

from __future__ import annotations

import time
from collections import Counter

from starfeed import status
from starfeed.cli.common import ago, connect, span
from starfeed.cli.github import rate_text
from starfeed.render.html import github_notice
from starfeed.rules.manage import sweep_words
from starfeed.store.hosts import pause_in


def add_commands(commands) -> None:
    commands.add_parser("status", help="SLOs, queues, dead letters, sources by status, GitHub, the scheduler, "
                        "the rules") \
        .set_defaults(action=_status)


def _status(args) -> None:
    storage = connect(args.stack)
    now = time.time()
    sources = storage.sources.all()
    slos = status.slos(sources, now, storage.settings.schedule_period)
    print(f"SLOs, over the last day's {slos.fetches:,} recorded fetches:")
    p99 = slos.latency_p99_ms
    _line("fetch latency p99", f"{p99 / 1000:.2f} s" if p99 is not None else "no request yet",
          f"under {status.LATENCY_TARGET_MS / 1000:.0f} s", p99 is None or p99 < status.LATENCY_TARGET_MS)
    _line("error budget", f"{slos.error_share:.1%} failed on starfeed's side ({slos.failed_ours:,}); "
          f"{slos.failed_theirs:,} more were the publishers' or the network's",
          f"under {status.ERROR_BUDGET:.0%}", slos.error_share < status.ERROR_BUDGET)
    _line("scheduler freshness", f"{slos.fresh_share:.1%} of {slos.scheduled:,} scheduled sources within 2x "
          f"their wait ({slos.late:,} late)", f"at least {status.FRESHNESS_TARGET:.0%}",
          slos.fresh_share >= status.FRESHNESS_TARGET)

    print("queues (waiting / in flight / dead letters):")
    dead = []
    for queue in storage.queues.depths():
        letters = "-" if queue.dead_letters is None else f"{queue.dead_letters:,}"
        print(f"  {queue.name:<8} {queue.waiting:>6,} / {queue.in_flight:>6,} / {letters:>6}")
        if queue.dead_letters:
            dead.append(queue)
    for queue in dead:
        print(f"  {queue.dead_letters:,} dead letter(s) in {queue.name}: once the cause is fixed, send them back with\n"
              f"    aws sqs start-message-move-task --source-arn {queue.dead_letter_arn}")

    states = Counter("removed" if s.deleted_at is not None else "disabled" if not s.enabled else str(s.status)
                     for s in sources)
    print("sources: " + (", ".join(f"{n:,} {state}" for state, n in states.most_common()) or "none"))
    causes = status.failing_by_cause(sources)
    if causes:
        print("failing: " + ", ".join(f"{n:,} {cause}" for cause, n in causes)
              + " (`starfeed source list` says why in full)")

    github = storage.hosts.state(storage.settings.github_host)  # one read: the pause and the rate limit
    pause = github_notice(pause_in(github, now))
    print(f"GitHub rate limit: {rate_text(github.get('rate_limit'), now)}" + (f"; {pause}" if pause else ""))

    run = storage.pace.last_run()
    print("scheduler: " + (f"last run {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(run['at']))} "
                           f"({ago(run['at'], now)}), {int(run['due']):,} due, {int(run['leased']):,} leased"
                           if run else "no run recorded yet"))
    period = storage.settings.schedule_period
    if run and now - run["at"] > 2 * period:
        print(f"  the scheduler should run every {span(period)}; the last run was {span(now - run['at'])} ago")

    rules, version = storage.rules.book()
    print(f"rules: {len(rules):,}; {sweep_words(version, storage.rules.sweep())}")


def _line(name: str, measured: str, target: str, met: bool) -> None:
    print(f"  {name:<20} {'ok  ' if met else 'MISS'}  {measured} (target: {target})")
