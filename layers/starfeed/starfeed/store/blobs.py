"""S3: raw payloads (a fetch's record and body in one object) and rendered feed objects."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from botocore.exceptions import ClientError

from starfeed.settings import Settings


@dataclass
class FeedObject:
    body: bytes
    content_type: str
    etag: str
    last_modified: float
    cache_control: str | None = None


TAP_PREFIX = "taps/entries/"
log = logging.getLogger(__name__)


def raw_fetch_key(fetch_id: str) -> str:
    """A fetch's payload is found by its id alone (GET /api/v1/raw/{fetch_id}); ids are random, so
    the keys spread over S3's partitions."""
    return f"fetches/{fetch_id}.raw"


class NotModified(Exception):
    pass


class Blobs:
    def __init__(self, s3, settings: Settings):
        self._s3 = s3
        self._settings = settings
        self._tap_batch: dict[str, list[str]] | None = None  # day -> lines, inside tap_batch()

    # Raw store (docs/design.md#raw-first) ---------------------------------------------------

    def put_raw_fetch(self, fetch_id: str, record: dict, body: bytes) -> dict:
        """Store a fetch as one object: its record (docs/design.md#raw-first) as a line of JSON,
        then the body's bytes as received. One PUT, not two (a content-addressed body and a record
        pointing at it), and each fetch expires whole: no record outlives the body it names."""
        digest = hashlib.sha256(body).hexdigest()
        key = raw_fetch_key(fetch_id)
        record = {**record, "fetch_id": fetch_id, "body_sha256": digest, "content_length": len(body),
                  "body_ref": {"storage": "s3", "key": key, "after": "the record's line"}}
        self._s3.put_object(Bucket=self._settings.raw_bucket, Key=key, Body=json.dumps(record).encode() + b"\n" + body,
                            ContentType="application/octet-stream")
        return {"fetch_id": fetch_id, "key": key, "body_sha256": digest}

    # NDJSON taps (docs/design.md#ndjson-taps) ---------------------------------------------

    def put_tap(self, day: str, lines: list[str]) -> None:
        """New entries, a JSON object per line (each names its fetch in raw_refs), under
        taps/entries/dt=DAY/ (Athena's partition layout): one object now, or, inside
        tap_batch(), one per day when the batch ends."""
        if self._tap_batch is not None:
            self._tap_batch.setdefault(day, []).extend(lines)
            return
        self._write_tap(day, lines)

    @contextmanager
    def tap_batch(self) -> Iterator[None]:
        """The taps of a fetcher invocation's records in one object a day, not one per fetch with
        new entries (a PUT each). Best effort, as the taps are: a write that fails is logged; the
        entries are stored."""
        self._tap_batch = {}
        try:
            yield
        finally:
            self.flush_taps()
            self._tap_batch = None

    def flush_taps(self) -> None:
        """Write the batch's taps so far (before an invocation may run out of time)."""
        batch, self._tap_batch = self._tap_batch, ({} if self._tap_batch is not None else None)
        for day, lines in (batch or {}).items():
            try:
                self._write_tap(day, lines)
            except Exception:
                log.exception("%d tapped entries of %s not written", len(lines), day)

    def _write_tap(self, day: str, lines: list[str]) -> None:
        self._s3.put_object(Bucket=self._settings.raw_bucket, Key=f"{TAP_PREFIX}dt={day}/{uuid.uuid4().hex}.ndjson",
                            Body="".join(f"{line}\n" for line in lines).encode(), ContentType="application/x-ndjson")

    def tap_keys(self, since_day: str) -> list[str]:
        """Every tap object of `since_day` and later, oldest day first."""
        keys = []
        pages = self._s3.get_paginator("list_objects_v2").paginate(
            Bucket=self._settings.raw_bucket, Prefix=TAP_PREFIX, StartAfter=f"{TAP_PREFIX}dt={since_day}")
        for page in pages:
            keys += [o["Key"] for o in page.get("Contents", []) if o["Key"] >= f"{TAP_PREFIX}dt={since_day}"]
        return sorted(keys)

    def get_tap(self, key: str) -> bytes:
        """A tap object's lines."""
        return self._s3.get_object(Bucket=self._settings.raw_bucket, Key=key)["Body"].read()

    def get_raw_fetch(self, record_key: str) -> tuple[dict, bytes] | None:
        """A fetch's record (status, headers, when) and its body, as stored; None when there is no
        such fetch (never stored, or expired)."""
        stored = self._raw_object(record_key)
        if stored is None:
            return self._legacy_raw_fetch(record_key)
        line, _, body = stored.partition(b"\n")  # JSON escapes every newline inside the record
        try:
            record = json.loads(line)
        except ValueError:  # not one we wrote (an object replaced by hand): no payload to show
            return None
        return (record, body) if isinstance(record, dict) else None

    def _legacy_raw_fetch(self, record_key: str) -> tuple[dict, bytes] | None:
        """A fetch stored before a fetch was one object: its record, fetches/<id>.json, names its
        content-addressed body. Read until they expire, RawRetentionDays after the upgrade."""
        stored = self._raw_object(record_key.removesuffix(".raw") + ".json") if record_key.endswith(".raw") else None
        try:
            record = json.loads(stored) if stored is not None else None
        except ValueError:
            return None
        body_key = record.get("body_key") if isinstance(record, dict) else None
        body = self._raw_object(body_key) if isinstance(body_key, str) else None
        return (record, body) if body is not None else None

    def _raw_object(self, key: str) -> bytes | None:
        try:
            return self._s3.get_object(Bucket=self._settings.raw_bucket, Key=key)["Body"].read()
        except ClientError as exc:
            # Without s3:ListBucket, S3 answers a missing key with AccessDenied.
            if exc.response["Error"]["Code"] in ("NoSuchKey", "AccessDenied", "404", "403"):
                return None
            raise

    # Rendered feeds ------------------------------------------------------------------------

    def put_feed(self, key: str, body: bytes, content_type: str, rendered_at: float) -> None:
        # The render time travels with the object: Last-Modified and lastBuildDate agree (docs/design.md#http-caching).
        self._s3.put_object(Bucket=self._settings.feeds_bucket, Key=key, Body=body,
                            ContentType=content_type, Metadata={"rendered-at": f"{rendered_at:.3f}"},
                            CacheControl=f"public, max-age={self._settings.cache_max_age}")

    def delete_feeds(self, keys: list[str]) -> None:
        """Unpublish: a removed or disabled source's feeds leave the bucket. Deleting a key that
        is not there succeeds, so a retried or repeated unpublish is harmless."""
        for start in range(0, len(keys), 1000):  # DeleteObjects' limit per request
            response = self._s3.delete_objects(Bucket=self._settings.feeds_bucket, Delete={
                "Objects": [{"Key": key} for key in keys[start:start + 1000]], "Quiet": True})
            if response.get("Errors"):
                error = response["Errors"][0]
                raise RuntimeError(f"could not delete {len(response['Errors'])} feed objects, e.g. "
                                   f"{error.get('Key')}: {error.get('Code')} {error.get('Message')}")

    def has_feed(self, key: str) -> bool:
        try:
            self._s3.head_object(Bucket=self._settings.feeds_bucket, Key=key)
        except ClientError as exc:
            # Without s3:ListBucket, S3 answers a missing key with 403.
            if exc.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound", "403", "AccessDenied"):
                return False
            raise
        return True

    def get_feed(self, key: str, if_none_match: str | None = None) -> FeedObject | None:
        kwargs = {"IfNoneMatch": if_none_match} if if_none_match else {}
        try:
            response = self._s3.get_object(Bucket=self._settings.feeds_bucket, Key=key, **kwargs)
        except ClientError as exc:
            code = exc.response["Error"]["Code"]
            if code in ("304", "NotModified"):
                raise NotModified from None
            if code in ("NoSuchKey", "404"):
                return None
            raise
        rendered_at = response.get("Metadata", {}).get("rendered-at")
        return FeedObject(body=response["Body"].read(), content_type=response["ContentType"],
                          etag=response["ETag"],
                          last_modified=float(rendered_at) if rendered_at else response["LastModified"].timestamp(),
                          cache_control=response.get("CacheControl"))
