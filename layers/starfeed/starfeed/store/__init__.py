"""The storage layer: every call to DynamoDB, S3 and SQS lives in this package, one module per
entity (sources, entries, collections, hosts, counters, the pace, rules, analyses, blobs, queues,
events, secrets)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config

from starfeed.settings import Settings
from starfeed.store.blobs import Blobs
from starfeed.store.counters import Counters
from starfeed.store.queues import Queues
from starfeed.store.secrets import Secrets

if TYPE_CHECKING:  # loaded on first use, below
    from starfeed.store.analyses import Analyses
    from starfeed.store.collections import Collections
    from starfeed.store.entries import Entries
    from starfeed.store.entry_lists import EntryLists
    from starfeed.store.events import Events
    from starfeed.store.hosts import Hosts
    from starfeed.store.pace import PaceStore
    from starfeed.store.rules import Rules
    from starfeed.store.sources import Sources


@dataclass
class Storage:
    settings: Settings

    def client(self, service: str):
        return boto3.client(service, region_name=self.settings.region,
                            endpoint_url=self.settings.endpoint_url,
                            config=Config(retries={"mode": "standard"}))

    @cached_property
    def records(self):
        # PynamoDB loads on first use: the api function answers feeds without it, cold starts faster.
        from starfeed.store.records import build_records

        return build_records(self.settings)

    @cached_property
    def sources(self) -> Sources:
        from starfeed.store.sources import Sources

        return Sources(self.records, self.settings)

    @cached_property
    def entries(self) -> Entries:
        from starfeed.store.entries import Entries

        return Entries(self.records, self.settings, self._dynamodb)

    @cached_property
    def entry_lists(self) -> EntryLists:
        from starfeed.store.entry_lists import EntryLists

        return EntryLists(self.records, self.settings, self.entries.digests)

    @cached_property
    def collections(self) -> Collections:
        from starfeed.store.collections import Collections

        return Collections(self.records, self.settings)

    @cached_property
    def hosts(self) -> Hosts:
        from starfeed.store.hosts import Hosts

        return Hosts(self.records)

    @cached_property
    def blobs(self) -> Blobs:
        return Blobs(self.client("s3"), self.settings)

    @cached_property
    def _dynamodb(self):
        return self.client("dynamodb")  # one client for the stats table's counters and pace

    @cached_property
    def counters(self) -> Counters:
        return Counters(self._dynamodb, self.settings)

    @cached_property
    def pace(self) -> PaceStore:
        # Only the scheduler and the fetcher use it: the api function's cold start does not load it.
        from starfeed.store.pace import PaceStore

        return PaceStore(self._dynamodb, self.settings)

    @cached_property
    def rules(self) -> Rules:
        from starfeed.store.rules import Rules

        return Rules(self._dynamodb, self.settings)

    @cached_property
    def analyses(self) -> Analyses:
        from starfeed.store.analyses import Analyses

        return Analyses(self.records, self._dynamodb, self.settings)

    @cached_property
    def queues(self) -> Queues:
        return Queues(self.client("sqs"), self.settings)

    @cached_property
    def events(self) -> Events:
        from starfeed.store.events import Events

        return Events(self.client("events"), self.settings)

    @cached_property
    def secrets(self) -> Secrets:
        return Secrets(self.client, self.settings)
