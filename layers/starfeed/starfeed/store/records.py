"""The DynamoDB items, as PynamoDB models whose attributes come from the model's dataclasses: a
field is declared once, in starfeed/model.py, and stored under its own name. Only keys, index
keys and what storage derives (sort keys, expiry) are declared here."""

from __future__ import annotations

import calendar
import json
import time
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, asdict, fields, is_dataclass
from enum import Enum
from types import SimpleNamespace

from pynamodb.attributes import (
    Attribute,
    BooleanAttribute,
    JSONAttribute,
    ListAttribute,
    NumberAttribute,
    UnicodeAttribute,
)
from pynamodb.exceptions import DeleteError, PutError, UpdateError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex, KeysOnlyProjection, LocalSecondaryIndex
from pynamodb.models import Model

from starfeed.model import Entry, Source, sort_key_of
from starfeed.settings import Settings
from starfeed.store.digest import DIGEST_UID
from starfeed.store.limits import ITEM_BYTES, PARTITION_KEY_BYTES, SORT_KEY_BYTES

DAY = 86400


def _attribute(annotation, default) -> Attribute:
    """The PynamoDB attribute for a dataclass field of this type."""
    optional = typing.get_origin(annotation) in (types.UnionType, typing.Union)  # X | None
    base = next(a for a in typing.get_args(annotation) if a is not type(None)) if optional else annotation
    options = {"null": True} if optional else {} if default is MISSING else {"default": default}
    if base in (list, dict) or typing.get_origin(base) in (list, dict) or is_dataclass(base) \
            or typing.is_typeddict(base):
        return JSONAttribute(**options)  # a typed sub-record (model.GitHubAccount, ...) as its JSON
    if issubclass(base, bool):  # before int: a bool is an int
        return BooleanAttribute(**options)
    if issubclass(base, (int, float)):
        return NumberAttribute(**options)
    if issubclass(base, str):  # enums (Status, Policy) included
        return UnicodeAttribute(**options)
    raise TypeError(f"no stored form for a field of type {annotation}")


def _fields_of(cls: type, keys: dict[str, Attribute]) -> dict[str, Attribute]:
    hints = typing.get_type_hints(cls)
    attributes = {}
    for field in fields(cls):
        default = field.default_factory if field.default_factory is not MISSING else field.default
        attributes[field.name] = keys.get(field.name) or _attribute(hints[field.name], default)
    return attributes


def _meta(table: str, settings: Settings, **extra) -> type:
    return type("Meta", (), {"table_name": table, "region": settings.region,
                             "host": settings.endpoint_url, **extra})


def _index(base: type, name: str, settings: Settings, keys: dict[str, Attribute], projection) -> object:
    return type(name, (base,), {"Meta": _meta("", settings, index_name=name, projection=projection()), **keys})()


def build_records(settings: Settings) -> SimpleNamespace:
    """Model classes bound to this deployment's tables (PynamoDB reads Meta at class creation)."""
    source_keys = {"source_id": UnicodeAttribute(hash_key=True),
                   "collections": ListAttribute(of=UnicodeAttribute, default=list)}  # a list, not JSON
    SourceRecord = type("SourceRecord", (Model,), {
        "Meta": _meta(settings.sources_table, settings),
        **_fields_of(Source, source_keys),
        # Sparse: only enabled, scheduled sources carry due_shard, so a Query reads due ones only.
        "due_shard": UnicodeAttribute(null=True),
        "due": _index(GlobalSecondaryIndex, "Due", settings, {
            "due_shard": UnicodeAttribute(hash_key=True), "next_check_at": NumberAttribute(range_key=True)},
            KeysOnlyProjection),
        "by_url": _index(GlobalSecondaryIndex, "ByUrl", settings, {"url": UnicodeAttribute(hash_key=True)},
                         KeysOnlyProjection),
        "by_root": _index(GlobalSecondaryIndex, "ByRoot", settings,
                          {"root_domain": UnicodeAttribute(hash_key=True)}, KeysOnlyProjection),
    })

    entry_keys = {"feed_id": UnicodeAttribute(hash_key=True), "entry_uid": UnicodeAttribute(range_key=True)}
    derived = {
        "rewrite_count": NumberAttribute(default=0),  # times rewritten after a content change
        # Derived keys for ordering, and the TTL that lets old entries leave by themselves.
        "sort_key": UnicodeAttribute(), "day": UnicodeAttribute(), "expires_at": NumberAttribute(),
        "seen_day": UnicodeAttribute(null=True),  # first_seen's day (BySeen); absent on entries stored before it
    }
    EntryRecord = type("EntryRecord", (Model,), {
        "Meta": _meta(settings.entries_table, settings),
        **_fields_of(Entry, entry_keys), **derived,
        "by_sort_key": _index(LocalSecondaryIndex, "BySortKey", settings, {
            "feed_id": UnicodeAttribute(hash_key=True), "sort_key": UnicodeAttribute(range_key=True)},
            AllProjection),
        "by_day": _index(GlobalSecondaryIndex, "ByDay", settings, {
            "day": UnicodeAttribute(hash_key=True), "sort_key": UnicodeAttribute(range_key=True)}, AllProjection),
        "by_link": _index(GlobalSecondaryIndex, "ByLink", settings,
                          {"canonical_link": UnicodeAttribute(hash_key=True)}, KeysOnlyProjection),
        "by_uid": _index(GlobalSecondaryIndex, "ByUid", settings,
                         {"entry_uid": UnicodeAttribute(hash_key=True)}, KeysOnlyProjection),
        "by_seen": _index(GlobalSecondaryIndex, "BySeen", settings, {
            "seen_day": UnicodeAttribute(hash_key=True), "first_seen": UnicodeAttribute(range_key=True)},
            KeysOnlyProjection),
        "blocked": _index(GlobalSecondaryIndex, "Blocked", settings,
                          {"blocked_by": UnicodeAttribute(hash_key=True)}, KeysOnlyProjection),
    })

    # A source's entry digest (store/digest.py), an item of the entries table without sort_key,
    # day or seen_day: no index but ByUid (keys only) holds it. `held` is its JSON, read by
    # Digest.of, which forgives a hand-edited one.
    EntryDigestRecord = type("EntryDigestRecord", (Model,), {
        "Meta": _meta(settings.entries_table, settings),
        "feed_id": UnicodeAttribute(hash_key=True), "entry_uid": UnicodeAttribute(range_key=True),
        "sighted_at": UnicodeAttribute(null=True), "held": UnicodeAttribute(null=True),
    })

    # A collection's newest entries, copied when first stored: its feed reads one partition
    # instead of querying every member (c/github has hundreds).
    CollectionEntryRecord = type("CollectionEntryRecord", (Model,), {
        "Meta": _meta(settings.collection_entries_table, settings),
        "collection": UnicodeAttribute(hash_key=True),
        "sort_key": UnicodeAttribute(range_key=True),
        **_fields_of(Entry, {}), "expires_at": NumberAttribute(),
    })

    MembershipRecord = type("MembershipRecord", (Model,), {
        "Meta": _meta(settings.collections_table, settings),
        "collection": UnicodeAttribute(hash_key=True),
        "source_id": UnicodeAttribute(range_key=True),
    })

    HostRecord = type("HostRecord", (Model,), {
        "Meta": _meta(settings.hosts_table, settings),
        "host": UnicodeAttribute(hash_key=True),
        "paused_until": NumberAttribute(default=0),
        "reason": UnicodeAttribute(null=True),
        "stopped": BooleanAttribute(default=False),  # until someone acts (a refused GitHub token)
        "rate_limit": JSONAttribute(null=True),  # the latest rate-limit headers, {limit, remaining, reset, at}
        "robots": JSONAttribute(null=True),  # the host's robots.txt: {status, error, body, at, expires}
        "expires_at": NumberAttribute(),
    })
    return SimpleNamespace(Source=SourceRecord, Entry=EntryRecord, EntryDigest=EntryDigestRecord,
                           CollectionEntry=CollectionEntryRecord,
                           Membership=MembershipRecord, Host=HostRecord)


SOURCE_FIELDS = [f.name for f in fields(Source)]
ENTRY_FIELDS = [f.name for f in fields(Entry)]


def plain(value):
    # PynamoDB hands back floats for numbers; counters read better as ints.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def written(write: Callable[[], object]) -> bool:
    """Run one conditional write: False when its condition did not hold; other errors raise."""
    try:
        write()
    except (PutError, UpdateError, DeleteError) as exc:
        if exc.cause_response_code != "ConditionalCheckFailedException":
            raise
        return False
    return True


def source_of(record) -> Source:
    return Source(**{name: typed(_SOURCE_TYPES[name], plain(getattr(record, name))) for name in SOURCE_FIELDS})


_SOURCE_TYPES = typing.get_type_hints(Source)


def as_stored(value):
    """A field's value as an attribute holds it: a typed sub-record as its JSON's dict."""
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else value


def typed(annotation, value):
    """A stored value as the model types it. Items may be edited by hand: a value no enum knows
    stays as stored (and reads as no member), and a sub-record keeps only its well-typed fields,
    the others at their defaults, or is None when it is no object at all."""
    optional = typing.get_origin(annotation) in (types.UnionType, typing.Union)
    base = next(a for a in typing.get_args(annotation) if a is not type(None)) if optional else annotation
    if value is None:
        return None
    if isinstance(base, type) and issubclass(base, Enum):
        try:
            return base(value)
        except ValueError:
            return value
    if is_dataclass(base):
        return _record_of(base, value)
    return value


def _record_of(cls: type, value):
    if not isinstance(value, dict):
        return None
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: value[f.name] for f in fields(cls)
                  if f.name in value and _fits(hints[f.name], value[f.name])})


def _fits(annotation, value) -> bool:
    """Whether a JSON value is of a sub-record field's type (numbers, strings, flags, lists of them)."""
    options = typing.get_args(annotation) if typing.get_origin(annotation) in (types.UnionType, typing.Union) \
        else (annotation,)
    for option in options:
        if option is type(None) and value is None:
            return True
        if option is bool and isinstance(value, bool):
            return True
        if option in (int, float) and isinstance(value, (int, float)) and not isinstance(value, bool) \
                and (option is float or float(value).is_integer()):
            return True
        if option is str and isinstance(value, str):
            return True
        if typing.get_origin(option) is list and isinstance(value, list):
            item = typing.get_args(option)[0]
            return all(_fits(item, v) for v in value)
    return False


def entry_of(record) -> Entry:
    return Entry(**{name: plain(getattr(record, name)) for name in ENTRY_FIELDS})


def entry_problem(entry: Entry) -> str | None:
    """Why DynamoDB would refuse this entry, or None. Normalization fits fields to these limits;
    this is the last check, so one entry cannot fail a whole batch write."""
    if entry.entry_uid == DIGEST_UID:
        return "GUID reserved for the source's digest"
    uid = len(entry.entry_uid.encode("utf-8", "surrogatepass"))
    if uid + len(entry.sort_time) + 1 > SORT_KEY_BYTES:
        return f"GUID of {uid:,} bytes"
    link = len((entry.canonical_link or "").encode("utf-8", "surrogatepass"))
    if link > PARTITION_KEY_BYTES:
        return f"link of {link:,} bytes"
    size = len(json.dumps(asdict(entry), ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > ITEM_BYTES - 4096:  # room for the derived keys and attribute names
        return f"{size:,} bytes, over DynamoDB's 400 KB item limit"
    return None



def expires_at_of(entry: Entry, settings: Settings) -> int:
    """Kept for the retention period after the later of its date and its first sighting: a
    backfilled entry from last year is not deleted the moment it is stored."""
    latest = max(entry.sort_time, entry.first_seen)
    return int(calendar.timegm(time.strptime(latest, "%Y-%m-%dT%H:%M:%SZ")) + settings.entry_retention_days * DAY)


def entry_record(records, entry: Entry, settings: Settings, rewrites: int = 0):
    return records.Entry(**asdict(entry), rewrite_count=rewrites, sort_key=sort_key_of(entry),
                         day=entry.sort_time[:10], seen_day=entry.first_seen[:10] or None,
                         expires_at=expires_at_of(entry, settings))


def collection_entry_record(records, collection: str, entry: Entry, settings: Settings):
    return records.CollectionEntry(collection, sort_key_of(entry), **asdict(entry),
                                   expires_at=expires_at_of(entry, settings))
