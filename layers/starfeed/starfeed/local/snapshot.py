"""The local stack's state on disk: every table's items, every bucket's objects with their
metadata, and the messages still queued, saved atomically and restored before the first poll.

moto runs in this process, so the state is read from and written to its backends directly:
restoring 100,000 items through its HTTP API would take minutes. moto is pinned in
pyproject.toml, and the snapshot carries a format version so a change is noticed, not guessed.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from starfeed.local.template import ACCOUNT, REGION, Stack

log = logging.getLogger(__name__)

FORMAT = "starfeed-local-state"
VERSION = 1
SNAPSHOT_FILE = "state.json.gz"
_TYPES = {"AWS::DynamoDB::Table": "tables", "AWS::S3::Bucket": "buckets",
          "AWS::SQS::Queue": "queues"}


class SnapshotError(Exception):
    """A snapshot that cannot be used: corrupt, partial or from an incompatible version."""


@dataclass(frozen=True)
class Counts:
    items: int
    objects: int
    messages: int

    def __str__(self) -> str:
        return f"{self.items} items, {self.objects} objects, {self.messages} queued messages"


def _backends():
    from moto.dynamodb.models import dynamodb_backends
    from moto.s3.models import s3_backends
    from moto.sqs.models import sqs_backends

    return dynamodb_backends[ACCOUNT][REGION], s3_backends[ACCOUNT]["aws"], sqs_backends[ACCOUNT][REGION]


def _resources(stack: Stack, kind: str) -> dict[str, str]:
    """logical id -> the name moto knows the resource by."""
    names = {}
    for logical_id in stack.of_type(kind):
        ref = stack.refs[logical_id]
        names[logical_id] = ref.rsplit("/", 1)[-1] if kind == "AWS::SQS::Queue" else ref
    return names


def capture(stack: Stack) -> dict:
    dynamodb, s3, sqs = _backends()
    state: dict = {"format": FORMAT, "version": VERSION, "saved_at": time.time(),
                   "tables": {}, "buckets": {}, "queues": {}}
    for logical_id, name in _resources(stack, "AWS::DynamoDB::Table").items():
        state["tables"][logical_id] = [i.to_json()["Attributes"]
                                       for i in dynamodb.get_table(name).all_items()]
    for logical_id, name in _resources(stack, "AWS::S3::Bucket").items():
        state["buckets"][logical_id] = [
            {"key": k.name, "body": base64.b64encode(k.value).decode(),
             "metadata": dict(k._metadata), "last_modified": k.last_modified.isoformat()}
            for k in list(s3.get_bucket(name).keys.values())]
    for logical_id, name in _resources(stack, "AWS::SQS::Queue").items():
        state["queues"][logical_id] = [
            {"body": m.body, "group_id": m.group_id, "deduplication_id": m.deduplication_id}
            for m in list(sqs.get_queue(name)._messages)]
    return state


def counts_of(state: dict) -> Counts:
    return Counts(sum(map(len, state["tables"].values())), sum(map(len, state["buckets"].values())),
                  sum(map(len, state["queues"].values())))


def apply(stack: Stack, state: dict) -> Counts:
    dynamodb, s3, sqs = _backends()
    tables = _resources(stack, "AWS::DynamoDB::Table")
    for logical_id, items in state["tables"].items():
        table = dynamodb.get_table(tables[logical_id])
        for item in items:
            _insert(table, item)
    buckets = _resources(stack, "AWS::S3::Bucket")
    for logical_id, objects in state["buckets"].items():
        for obj in objects:
            key = s3.put_object(buckets[logical_id], obj["key"], base64.b64decode(obj["body"]),
                                disable_notification=True)
            key.set_metadata(dict(obj["metadata"]), replace=True)
            key.last_modified = datetime.fromisoformat(obj["last_modified"])
    queues = _resources(stack, "AWS::SQS::Queue")
    for logical_id, messages in state["queues"].items():
        for message in messages:
            sqs.send_message(queues[logical_id], message["body"], group_id=message["group_id"],
                             deduplication_id=message["deduplication_id"])
    return counts_of(state)


def _insert(table, attributes: dict) -> None:
    """Table.put_item without moto's per-attribute recount of the item's size, which makes each
    put quadratic in its attributes (a 10,000-source restore took 19.6 s, now 7.2 s). The items were
    validated when they were first written; moto's indexes are read from table.items."""
    from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict

    item = Item.__new__(Item)
    item.hash_key = DynamoType(attributes[table.hash_key_attr])
    item.range_key = DynamoType(attributes[table.range_key_attr]) if table.range_key_attr else None
    item.attrs = LimitedSizeDict({k: DynamoType(v) for k, v in attributes.items()})  # no recount
    if item.range_key is None:
        table.items[item.hash_key] = item
    else:
        table.items[item.hash_key][item.range_key] = item


def fingerprint(stack: Stack) -> tuple:
    """A cheap signature of the state's size, to notice changes made by other processes."""
    dynamodb, s3, sqs = _backends()
    return (tuple(len(dynamodb.get_table(n)) for n in _resources(stack, "AWS::DynamoDB::Table").values())
            + tuple(len(s3.get_bucket(n).keys) for n in _resources(stack, "AWS::S3::Bucket").values())
            + tuple(len(sqs.get_queue(n)._messages) for n in _resources(stack, "AWS::SQS::Queue").values()))


def save(stack: Stack, path: Path) -> tuple[Counts, int]:
    """Write the state atomically: a temporary file, fsync, rename, fsync of the folder."""
    state = capture(stack)
    data = gzip.compress(json.dumps(state, separators=(",", ":")).encode(), compresslevel=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as file:
        os.fchmod(file.fileno(), 0o600)
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
    return counts_of(state), len(data)


def load(path: Path) -> dict:
    try:
        state = json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, EOFError, ValueError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"corrupt or partial ({type(exc).__name__}: {str(exc)[:80]})") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise SnapshotError("not a starfeed state file")
    if state.get("version") != VERSION:
        raise SnapshotError(f"format version {state.get('version')!r}; this starfeed reads {VERSION}")
    if not all(isinstance(state.get(k), dict) for k in _TYPES.values()):
        raise SnapshotError("incomplete: tables, buckets or queues missing")
    return state


def move_aside(path: Path, why: str) -> Path:
    aside = path.with_name(f"{path.name}.{why}-{time.strftime('%Y%m%dT%H%M%S')}")
    path.rename(aside)
    return aside


def restore(stack: Stack, path: Path) -> Counts | None:
    """Bring back the saved state; an unusable snapshot is moved aside, never discarded."""
    if not path.exists():
        return None
    started = time.monotonic()
    try:
        state = load(path)
        if set(state["tables"]) - set(stack.of_type("AWS::DynamoDB::Table")):
            raise SnapshotError("it names tables template.yaml no longer has")
        counts = apply(stack, state)
    except SnapshotError as exc:
        aside = move_aside(path, "unreadable")
        log.warning("the saved state could not be used (%s): moved it to %s and started empty",
                    exc, aside)
        return None
    log.info("restored %s from %s in %.1f s", counts, path, time.monotonic() - started)
    return counts


class Snapshotter:
    """Saves at a fixed interval when something changed, when asked (after a poll cycle that
    changed something), and once more on shutdown."""

    def __init__(self, stack: Stack, path: Path, interval: float):
        self.stack, self.path, self.interval = stack, path, interval
        self._dirty = threading.Event()
        self._wanted = threading.Event()
        self._last = fingerprint(stack)
        self._lock = threading.Lock()

    def changed(self) -> None:
        self._dirty.set()

    def request(self) -> None:
        """Save soon: a poll cycle changed something."""
        self._wanted.set()

    def save_if_changed(self) -> bool:
        with self._lock:
            current = fingerprint(self.stack)
            if not self._dirty.is_set() and current == self._last:
                return False
            self._dirty.clear()
            started = time.monotonic()
            counts, size = save(self.stack, self.path)
            self._last = current
            log.info("saved %s (%d KiB) in %.1f s", counts, size // 1024, time.monotonic() - started)
            return True

    def run(self, stop: threading.Event) -> None:
        deadline = time.monotonic() + self.interval
        while not stop.is_set():
            self._wanted.wait(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
            if self._wanted.is_set() or time.monotonic() >= deadline:
                self._wanted.clear()
                deadline = time.monotonic() + self.interval
                try:
                    self.save_if_changed()
                except Exception:
                    log.exception("saving the local state failed; trying again next interval")
