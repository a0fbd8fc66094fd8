"""Scheduler: on each EventBridge Scheduler tick, lease due sources and enqueue their fetches."""

import time
from dataclasses import asdict

from starfeed import observe
from starfeed.schedule.tick import run_tick
from starfeed.settings import Settings
from starfeed.store import Storage

observe.configure()
storage = Storage(Settings.from_env())


@observe.handler
def handler(event, context):
    return asdict(run_tick(storage, time.time()))
