"""Scheduler: on each EventBridge Scheduler tick, lease due sources and enqueue their fetches;
then, while the rules changed, judge stored entries again (rules/sweep.py) in what is left of the run."""

import time
from dataclasses import asdict

from starfeed import observe
from starfeed.rules.sweep import run_sweep
from starfeed.schedule.tick import run_tick
from starfeed.settings import Settings
from starfeed.store import Storage

observe.configure()
log = observe.logger("scheduler")
storage = Storage(Settings.from_env())
# Of the run's time, what the sweep leaves: its last page's writes and the progress saved after it.
SWEEP_MARGIN = 20


@observe.handler
def handler(event, context):
    report = asdict(run_tick(storage, time.time()))
    seconds = min(storage.settings.rules_sweep_seconds, context.get_remaining_time_in_millis() / 1000 - SWEEP_MARGIN)
    try:
        run_sweep(storage, time.time(), seconds)
    except Exception:  # the fetches are enqueued; the sweep goes on from its saved page next run
        log.exception("scheduler: the rules' sweep stopped")
    return report
