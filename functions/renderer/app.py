"""Renderer: each record names feeds whose entries changed; a batch renders each feed once.

A target that fails fails exactly the records that named it (several may), so they are retried
alone; a record that cannot be read fails by itself. The rest of the batch succeeds.
"""

import json

from starfeed import observe
from starfeed.render.job import render_targets
from starfeed.settings import Settings
from starfeed.store import Storage

observe.configure()
log = observe.logger("renderer")
storage = Storage(Settings.from_env())


@observe.handler
def handler(event, context):
    wanted: dict[str, list[str]] = {}  # messageId -> the targets its record names
    failed: list[str] = []
    for record in event["Records"]:
        try:
            targets = json.loads(record["body"])["targets"]
            if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
                raise ValueError("targets is not a list of strings")
        except (KeyError, TypeError, ValueError) as exc:
            log.error("renderer: record %s is malformed (%s); it goes back to the queue",
                      record.get("messageId"), exc)
            failed.append(record["messageId"])
            continue
        wanted[record["messageId"]] = targets
    report = render_targets(storage, sorted({t for targets in wanted.values() for t in targets}))
    failed += [message_id for message_id, targets in wanted.items() if report.failed.keys() & set(targets)]
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed]}
