"""Every tunable of starfeed, read once from the environment.

The names are the environment variables that template.yaml sets on the functions; the local
stack sets the same ones, so a setting means the same thing everywhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any

from starfeed.model import Pace, host_key_of


def _flag(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


INTERVAL_MODELS = ("rhythm", "sqrt", "ewma")  # docs/design.md#interval-models


@dataclass(frozen=True)
class Settings:
    sources_table: str = "starfeed-sources"
    entries_table: str = "starfeed-entries"
    collections_table: str = "starfeed-collections"
    collection_entries_table: str = "starfeed-collection-entries"
    stats_table: str = "starfeed-stats"
    hosts_table: str = "starfeed-hosts"
    feeds_bucket: str = "starfeed-feeds"
    raw_bucket: str = "starfeed-raw"
    fetch_queue_url: str = ""
    render_queue_url: str = ""
    enrich_queue_url: str = ""
    history_queue_url: str = ""
    event_bus_name: str = ""  # NewEntry events (docs/design.md#new-entry-event); none are sent without one
    region: str = "us-east-1"
    # None means the real AWS endpoints; the local stack points this at moto.
    endpoint_url: str | None = None
    public_url: str = "http://127.0.0.1:3000"
    # Who may call the REST API (/api/v1): "iam", SigV4-signed requests API Gateway verified (on
    # AWS); "loopback", callers on this machine (`make run`: its OpenAPI document asks no signature).
    api_auth: str = "iam"
    websub_hub: str = ""  # a WebSub hub our feeds announce (rel="hub"); none when empty
    # WebSub subscriptions: a source whose feed announces a hub asks it to push (to public_url).
    websub_subscribe: bool = True
    websub_lease_seconds: int = 10 * 86400  # the lease asked for; the hub may grant another
    websub_renew_before: int = 2 * 86400  # renewed when less is left
    websub_max_body: int = 2 * 1024 * 1024  # a pushed document larger than this is refused (413)
    # A source's history (RFC 5005 archives, fetch/history.py): how far one walk goes, and the
    # pause between its documents (the walk goes slowly, beside the polling).
    backfill_max_docs: int = 50
    backfill_max_entries: int = 5000
    backfill_pause: int = 5

    # Scheduling (seconds; docs/design.md#clamps).
    default_interval: int = 900
    min_interval: int = 300
    max_interval: int = 86400
    backoff_cap: int = 86400
    # "rhythm" (default: sqrt(rate) by hour of day, learned per feed), "sqrt" (interval ~
    # sqrt(mean gap x scale)) or "ewma" (the EWMA blend, docs/design.md#ewma-blend). See bench.schedsim.
    interval_model: str = "rhythm"
    sqrt_scale: int = 25000
    # A feed posting at least this often (per day) waits at most active_max_wait seconds beyond
    # its quiet hours: the p95 delay of moderately active feeds (see bench.schedsim).
    active_min_posts_per_day: float = 0.3
    active_max_wait: int = 23400
    # The scheduler moves both of those every hour (schedule/pace.py): active_max_wait becomes
    # horizon_share of the p95 delay the entry-frequency rule (a check per expected post) would
    # give these sources, and every source counts as active but the slowest, whose posts add up to
    # rare_post_share of all. A source that is not active may wait up to rare_max_interval
    # (86400, the default: the same cap as every source's, docs/design.md#clamps).
    horizon_share: float = 0.40
    rare_post_share: float = 0.04
    rare_max_interval: int = 86400
    lease_seconds: int = 600
    schedule_period: int = 300  # seconds between scheduler runs (template.yaml's ScheduleRate)
    # A fetch message that fails unexpectedly is retried alone after this many seconds (its
    # host's FIFO group waits no longer), and dead-lettered after the queue's maxReceiveCount.
    fetch_retry_seconds: int = 30
    # Hosts allowed several fetches at once: "host=N,host2=M" (FIFO message groups host#0..N-1).
    # The GitHub API host gets github_concurrency unless named here.
    host_groups: str = ""
    startup_jitter: int = 60  # seconds over which a bulk import's first checks are spread
    circuit_breaker: int = 10  # consecutive failures that park a source as dead
    # Decisions and fetches remembered on each source. The item is written twice a fetch at a
    # write unit per KB, and these records are most of it: 5 and 10 keep it under 2 KB.
    decision_history: int = 5
    due_shards: int = 4
    # Fetching.
    connect_timeout: float = 5.0
    read_timeout: float = 15.0
    fetch_deadline: float = 25.0
    max_body_bytes: int = 15 * 1024 * 1024
    retry_backoff: float = 0.5  # first pause before retrying a 5xx or network fault
    # "1": fetch any address; "0": public addresses only; or networks to allow, "127.0.0.0/8".
    allow_private_networks: str = "0"
    # The egress proxy of every source without one of its own (docs/design.md#request-options):
    # http://, https://, socks5:// or socks5h:// HOST:PORT; empty: none. Its login is kept in the token
    # store (`starfeed proxy set`; `make run` moves a USER:PASSWORD@ given here there at its start).
    proxy: str = ""
    # Where the token store keeps sources' secret request options: one SSM parameter (or Secrets
    # Manager secret) per source under this path.
    source_secrets_path: str = "starfeed/source-options"
    redirect_persistence: int = 3  # fetches a permanent redirect must persist to move a source
    fetch_history: int = 10  # see decision_history
    # Parsing and normalization.
    max_items: int = 1000  # per document, newest kept
    max_depth: int = 256  # XML/JSON nesting
    # A page read by CSS selectors (docs/design.md#selector-bounds): a selector longer than this, or
    # of more parts (names, classes, combinators, brackets), is refused; reading a page by its
    # selectors stops after selector_seconds (libxml2 cannot be interrupted: it runs in a child
    # process), so a selector quadratic in a page's elements cannot stall a fetch.
    max_selector_chars: int = 300
    max_selector_parts: int = 32
    selector_seconds: float = 10.0
    max_article_age_days: int = 7  # docs/design.md#max-age; entries without a date are kept
    # Seconds a source's clock may run ahead of ours: a date further in the future when first seen
    # is not trusted (docs/design.md#undated-and-future).
    future_skew: int = 300
    max_rewrites: int = 24  # times a stored entry may be rewritten when its content changes
    # How often an unchanged entry's sighting (last_seen, seen_count) is written: each write costs
    # 3 write units (the item and its two whole-item indexes), a parse of a 50-item document 150.
    # Daily, they were the largest line of the bill (`make cost`: $22 a month at 10,000 sources);
    # weekly, a seventh of it.
    sighting_refresh: int = 7 * 86400
    # Fitting entries to DynamoDB (an item is at most 400 KB; a sort key 1,024 bytes, a GSI
    # partition key 2,048): longer ids become a stable hash, longer links are dropped, longer
    # content is truncated at a tag boundary. The entry is kept either way.
    max_uid_bytes: int = 512
    max_link_bytes: int = 2000
    max_content_bytes: int = 128 * 1024
    # Storage and rendering.
    entry_retention_days: int = 30
    raw_retention_days: int = 30  # the raw bucket's lifecycle (template RawRetentionDays)
    feed_item_limit: int = 50
    cache_max_age: int = 300
    # Seconds a warm api instance serves an object from memory before revalidating it with a
    # conditional GET (serve/cache.py): a new render reaches every instance within this plus one
    # GET. The cost: at most one S3 GET (304 or not, $0.0004 per 1,000) per object per window per
    # instance, and at most one per request: at 2 s, 1,800 GETs an hour ($0.00072) for each object
    # an instance is asked for without pause, $0.53 a month; a reader polling every 15 min costs
    # one GET per poll, as it would with a 30 s window.
    api_cache_ttl: float = 2.0
    # Deframing (docs/design.md#deframing): the analyzer ("mock" or "bedrock"), its daily budget, its input.
    analyzer: str = "mock"
    analyzer_latency_ms: int = 300  # the mock's simulated latency
    bedrock_model_id: str = "amazon.nova-lite-v1:0"
    # Over either budget, entries wait in the enrichment queue for the next UTC day.
    analyzer_daily_calls: int = 1000
    analyzer_daily_tokens: int = 2_000_000
    analyzer_input_chars: int = 12000  # of the article's text sent to the analyzer
    robots_cache_seconds: int = 86400  # a host's robots.txt is read again after this
    # Rules (docs/design.md#rules): how many a stack holds, how long a pattern may be, and how
    # many stored entries one page of their re-evaluation judges (a scheduler run judges pages
    # until rules_sweep_seconds have passed, then leaves the rest to the next run).
    rules_max: int = 200
    rule_pattern_max: int = 300
    rules_sweep_page: int = 200
    rules_sweep_seconds: int = 60
    # GitHub (docs/design.md#github). The token is not a setting: see store/secrets.py.
    github_api_url: str = "https://api.github.com"  # or a GitHub Enterprise https://HOST/api/v3
    github_token_store: str = "ssm"  # where the deployment reads the token: ssm | secretsmanager
    github_token_name: str = "starfeed/github-token"
    github_concurrency: int = 5  # GitHub requests in flight across all fetchers
    github_following_interval: int = 86400  # seconds between re-syncs of the follow list
    github_default_minutes: int = 60  # a user's interval until three stars are known
    github_min_minutes: int = 10
    github_max_minutes: int = 1440
    github_history_days: int = 30  # a newly followed account's first sync reaches this far back
    github_history_stars: int = 100  # ...and takes at most this many stars
    github_secondary_pause: int = 60  # seconds, for a secondary rate limit without Retry-After
    # Log lines: "json" (Powertools Logger, one object a line, as on Lambda) or "text" (readable);
    # empty: json on Lambda, text elsewhere (starfeed.observe reads it before anything else).
    log_format: str = ""

    def __post_init__(self) -> None:
        # Any other name would silently select one of these: refuse it where it is read.
        if self.interval_model not in INTERVAL_MODELS:
            raise ValueError(f"{_env_name('interval_model')}={self.interval_model!r}: "
                             f"expected one of {', '.join(INTERVAL_MODELS)}")

    def host_groups_for(self, host: str) -> int:
        for part in self.host_groups.split(","):
            name, _, count = part.strip().partition("=")
            if name.lower() == host and count.strip().isdigit():
                return max(1, int(count))
        return max(1, self.github_concurrency) if host == self.github_host else 1

    def initial_pace(self) -> Pace:
        """The pace decisions use before the scheduler's first hourly step."""
        return Pace(float(self.active_max_wait), self.active_min_posts_per_day)

    @property
    def github_host(self) -> str:
        return host_key_of(self.github_api_url)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}  # each of the field's own type, as the field declares it
        for field in fields(cls):
            raw = env.get(_env_name(field.name))
            if raw is None or raw == "":
                continue
            if field.type == "bool":
                values[field.name] = _flag(raw)
            elif field.type == "int":
                values[field.name] = int(raw)
            elif field.type == "float":
                values[field.name] = float(raw)
            else:
                values[field.name] = raw
        if "region" not in values and env.get("AWS_REGION"):
            values["region"] = env["AWS_REGION"]
        if "endpoint_url" not in values and env.get("AWS_ENDPOINT_URL"):
            values["endpoint_url"] = env["AWS_ENDPOINT_URL"]
        return cls(**values)


# Resource names keep the short names CloudFormation users expect; tunables are prefixed.
_RESOURCE_ENV = {
    "sources_table": "SOURCES_TABLE",
    "entries_table": "ENTRIES_TABLE",
    "collections_table": "COLLECTIONS_TABLE",
    "collection_entries_table": "COLLECTION_ENTRIES_TABLE",
    "stats_table": "STATS_TABLE",
    "hosts_table": "HOSTS_TABLE",
    "feeds_bucket": "FEEDS_BUCKET",
    "raw_bucket": "RAW_BUCKET",
    "fetch_queue_url": "FETCH_QUEUE_URL",
    "render_queue_url": "RENDER_QUEUE_URL",
    "enrich_queue_url": "ENRICH_QUEUE_URL",
    "history_queue_url": "HISTORY_QUEUE_URL",
    "event_bus_name": "EVENT_BUS_NAME",
}


def _env_name(field_name: str) -> str:
    return _RESOURCE_ENV.get(field_name) or "STARFEED_" + field_name.upper()


def env_names() -> dict[str, str]:
    """Setting name -> environment variable, for the README's table and the CLI."""
    return {f.name: _env_name(f.name) for f in fields(Settings)}
