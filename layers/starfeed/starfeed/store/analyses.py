"""Analyses (docs/design.md#analyzer-result): results stored on their entries (and the entries' collection copies), and
the analyzer's daily budget, counted on the stats table's item of the day."""

from __future__ import annotations

from pynamodb.exceptions import DoesNotExist

from starfeed.model import Entry
from starfeed.settings import Settings
from starfeed.store.counters import DAY, RETENTION_DAYS, day_of
from starfeed.store.digest import DIGEST_UID
from starfeed.store.records import entry_of, sort_key_of, written

CALLS, TOKENS = "analyzer_calls", "analyzer_tokens"


class Analyses:
    def __init__(self, records, dynamodb, settings: Settings):
        self._records, self._db, self.settings = records, dynamodb, settings

    def entry(self, feed_id: str, entry_uid: str) -> Entry | None:
        if entry_uid == DIGEST_UID:  # the source's digest, no entry
            return None
        try:
            return entry_of(self._records.Entry.get(feed_id, entry_uid, consistent_read=True))
        except DoesNotExist:
            return None

    def store(self, entry: Entry, result: dict, collections: list[str]) -> None:
        """The result on the entry and on its copies in its source's collections (a copy that has
        expired or was never made is left so)."""
        E, C = self._records.Entry, self._records.CollectionEntry
        E(entry.feed_id, entry.entry_uid).update(actions=[E.analyzer_result.set(result)],
                                                 condition=E.entry_uid.exists())
        for collection in collections:
            written(lambda collection=collection: C(collection, sort_key_of(entry)).update(
                actions=[C.analyzer_result.set(result)], condition=C.sort_key.exists()))

    def unanalyzed(self, feed_id: str, limit: int) -> list[str]:
        """The newest `limit` entries of a source that have no result: what resuming its
        analysis queues (`source deframe ID on`, restore, enable)."""
        E = self._records.Entry
        records = E.by_sort_key.query(feed_id, scan_index_forward=False, limit=limit,
                                      attributes_to_get=["entry_uid", "analyzer_result"])
        return [r.entry_uid for r in list(records)[:limit] if r.analyzer_result is None]

    def note_error(self, source_id: str, error: str | None) -> None:
        """The analyzer's last failure on the source (None clears it): this attribute alone, so a
        fetch's schedule written meanwhile stays as it is."""
        S = self._records.Source
        action = S.analysis_error.remove() if error is None else S.analysis_error.set(error)
        written(lambda: S(source_id).update(actions=[action], condition=S.source_id.exists()))

    def reserve(self, now: float) -> bool:
        """Count one analyzer call against today's budget; False, counting nothing, when today's
        calls or tokens are spent already. Atomic: parallel enrichers cannot overrun the calls."""
        try:
            self._db.update_item(
                TableName=self.settings.stats_table, Key={"day": {"S": day_of(now)}},
                UpdateExpression=f"ADD {CALLS} :one SET expires_at = :expires",
                ConditionExpression=f"(attribute_not_exists({CALLS}) OR {CALLS} < :calls) AND "
                                    f"(attribute_not_exists({TOKENS}) OR {TOKENS} < :tokens)",
                ExpressionAttributeValues={
                    ":one": {"N": "1"}, ":calls": {"N": str(self.settings.analyzer_daily_calls)},
                    ":tokens": {"N": str(self.settings.analyzer_daily_tokens)},
                    ":expires": {"N": str(int(now + RETENTION_DAYS * DAY))}})
        except self._db.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def spend(self, now: float, tokens: int) -> None:
        """The tokens a call used, counted once it answered (a call can overrun the token budget
        by its own size: the next one is refused)."""
        if tokens > 0:
            self._db.update_item(TableName=self.settings.stats_table, Key={"day": {"S": day_of(now)}},
                                 UpdateExpression=f"ADD {TOKENS} :tokens",
                                 ExpressionAttributeValues={":tokens": {"N": str(tokens)}})

    def usage(self, now: float) -> dict:
        """Today's calls and tokens against the budget."""
        item = self._db.get_item(TableName=self.settings.stats_table, Key={"day": {"S": day_of(now)}},
                                 ProjectionExpression=f"{CALLS}, {TOKENS}").get("Item", {})
        return {"day": day_of(now), "calls": int(item.get(CALLS, {}).get("N", 0)),
                "tokens": int(item.get(TOKENS, {}).get("N", 0)),
                "daily_calls": self.settings.analyzer_daily_calls,
                "daily_tokens": self.settings.analyzer_daily_tokens}
