"""The storage layer: every call to DynamoDB, S3 and SQS lives in this package."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import boto3
from botocore.config import Config

from starfeed.settings import Settings
from starfeed.store.blobs import Blobs
from starfeed.store.counters import Counters
from starfeed.store.queues import Queues
from starfeed.store.secrets import Secrets

# DynamoDB's limits (developer guide, "Service, account, and table quotas"): an item is at most
# 400 KB; a sort key (entry_uid, and sort_key = "<time>#<entry_uid>") 1,024 bytes; a partition
# key, canonical_link in the ByLink index and url in ByUrl included, 2,048 bytes.
ITEM_BYTES = 400 * 1024
SORT_KEY_BYTES = 1024
PARTITION_KEY_BYTES = 2048


@dataclass
class Storage:
    settings: Settings

    def client(self, service: str):
        return boto3.client(service, region_name=self.settings.region,
                            endpoint_url=self.settings.endpoint_url,
                            config=Config(retries={"mode": "standard"}))

    @cached_property
    def catalog(self) -> "Catalog":
        # PynamoDB loads on first use: the api function answers feeds without it, cold starts faster.
        from starfeed.store.dynamo import Catalog

        return Catalog(self.settings)

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
    def pace(self) -> "PaceStore":
        # Only the scheduler and the fetcher use it: the api function's cold start does not load it.
        from starfeed.store.pace import PaceStore

        return PaceStore(self._dynamodb, self.settings)

    @cached_property
    def queues(self) -> Queues:
        return Queues(self.client("sqs"), self.settings)

    @cached_property
    def secrets(self) -> Secrets:
        return Secrets(self.client, self.settings)
