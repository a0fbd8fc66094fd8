"""Dashboard counters in DynamoDB: one item per day, each counter a numeric attribute that a
single UpdateItem adds to. Buffered in memory and flushed every few seconds."""

from __future__ import annotations

import threading
import time
from collections import Counter

from starfeed.settings import Settings

DAY = 86400
RETENTION_DAYS = 35


def day_of(epoch: float) -> str:
    """The stats table's key of a day's item (UTC)."""
    return time.strftime("%Y-%m-%d", time.gmtime(epoch))


class Counters:
    def __init__(self, dynamodb, settings: Settings, flush_every: float = 10.0, clock=time.time):
        self._db, self._table = dynamodb, settings.stats_table
        self._flush_every, self._clock = flush_every, clock
        self._pending: Counter = Counter()
        self._since = clock()
        self._lock = threading.Lock()

    def add(self, counts: dict[str, int]) -> None:
        with self._lock:
            self._pending.update(counts)
        if self._clock() - self._since >= self._flush_every:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            pending, self._pending, self._since = self._pending, Counter(), self._clock()
        if not pending:
            return
        now = self._clock()
        names = {f"#c{i}": name for i, name in enumerate(pending)}
        values = {f":c{i}": {"N": str(pending[name])} for i, name in enumerate(pending)}
        values[":expires"] = {"N": str(int(now + RETENTION_DAYS * DAY))}
        self._db.update_item(
            TableName=self._table, Key={"day": {"S": day_of(now)}},
            UpdateExpression="ADD " + ", ".join(f"{n} {n.replace('#', ':')}" for n in names)
            + " SET expires_at = :expires",
            ExpressionAttributeNames=names, ExpressionAttributeValues=values)

    def days(self, count: int) -> dict[str, dict[str, int]]:
        """The last `count` days' counters, oldest first (days without traffic are empty)."""
        now = self._clock()
        days = [day_of(now - n * DAY) for n in reversed(range(count))]
        found = {}
        for start in range(0, len(days), 100):
            response = self._db.batch_get_item(RequestItems={self._table: {
                "Keys": [{"day": {"S": d}} for d in days[start:start + 100]]}})
            for item in response["Responses"].get(self._table, []):
                found[item["day"]["S"]] = {k: int(v["N"]) for k, v in item.items()
                                           if "N" in v and k != "expires_at"}
        return {day: found.get(day, {}) for day in days}
