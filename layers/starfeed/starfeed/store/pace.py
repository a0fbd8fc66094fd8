"""The population's pace (model.Pace, stepped by schedule/pace.py): one item in the stats table,
beside the daily counters, written by the scheduler once an hour and read by every fetcher."""

from __future__ import annotations

import time
from dataclasses import asdict, fields

from starfeed.model import Pace
from starfeed.settings import Settings

PACE_KEY = "pace"  # the item's key in the stats table, whose other items are days
RUN_KEY = "scheduler-run"  # the last scheduler run: when, and how many sources were due and leased
CACHE_SECONDS = 300  # a fetcher re-reads the pace this often


class PaceStore:
    def __init__(self, dynamodb, settings: Settings, clock=time.time):
        self._db, self._table, self._settings, self._clock = dynamodb, settings.stats_table, settings, clock
        self._cached: tuple[float, Pace] | None = None

    def load(self) -> tuple[Pace, float] | None:
        """The stored pace and when it was computed; None before the scheduler's first hour."""
        item = self._db.get_item(TableName=self._table, Key={"day": {"S": PACE_KEY}}).get("Item")
        if not item:
            return None
        return Pace(**{f.name: float(item[f.name]["N"]) for f in fields(Pace)}), float(item["computed_at"]["N"])

    def save(self, pace: Pace, computed_at: float, previous: float | None) -> bool:
        """Store a new pace unless another scheduler run stored one since `previous` (so two runs
        at once step the pace once)."""
        values = {f":{name}": {"N": repr(float(value))} for name, value in asdict(pace).items()}
        values[":at"] = {"N": repr(computed_at)}
        condition = "attribute_not_exists(computed_at)"
        if previous is not None:
            condition, values[":previous"] = "computed_at = :previous", {"N": repr(previous)}
        try:
            self._db.update_item(
                TableName=self._table, Key={"day": {"S": PACE_KEY}},
                UpdateExpression="SET " + ", ".join(f"#{name} = :{name}" for name in asdict(pace))
                + ", computed_at = :at",
                ConditionExpression=condition, ExpressionAttributeValues=values,
                ExpressionAttributeNames={f"#{name}": name for name in asdict(pace)})  # "reference" is reserved
        except self._db.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def note_run(self, at: float, due: int, leased: int) -> None:
        """One small write per scheduler run: its figures for `starfeed status`, and when a run
        last leased a source (the pace's step waits for one)."""
        leased_at = ", leased_at = :at" if leased else ""
        self._db.update_item(TableName=self._table, Key={"day": {"S": RUN_KEY}},
                             UpdateExpression=f"SET #at = :at, due = :due, leased = :leased{leased_at}",
                             ExpressionAttributeNames={"#at": "at"},
                             ExpressionAttributeValues={":at": {"N": repr(at)}, ":due": {"N": str(due)},
                                                        ":leased": {"N": str(leased)}})

    def _run_item(self) -> dict:
        return self._db.get_item(TableName=self._table, Key={"day": {"S": RUN_KEY}},
                                 ConsistentRead=True).get("Item") or {}

    def last_run(self) -> dict | None:
        """{at, due, leased} of the last scheduler run; None before the first."""
        item = self._run_item()
        try:
            return {k: float(item[k]["N"]) for k in ("at", "due", "leased")}
        except (KeyError, TypeError, ValueError):
            return None  # none yet, or an item edited by hand

    def idle_since(self, at: float) -> bool:
        """No scheduler run has leased a source since `at` (False when the runs' item says nothing
        readable: then nothing is skipped)."""
        try:
            return float(self._run_item()["leased_at"]["N"]) < at
        except (KeyError, TypeError, ValueError):
            return False

    def current(self) -> Pace:
        """The pace decisions use now: the stored one, re-read every CACHE_SECONDS; the settings'
        starting values before the scheduler has computed one."""
        now = self._clock()
        if self._cached is None or now - self._cached[0] >= CACHE_SECONDS:
            stored = self.load()
            self._cached = (now, stored[0] if stored else self._settings.initial_pace())
        return self._cached[1]
