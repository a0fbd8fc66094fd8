"""Which starfeed a command talks to: a deployed stack (--stack NAME, by its CloudFormation
outputs), the environment's settings (SOURCES_TABLE set), or the local stack `make run` runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from starfeed.settings import Settings
from starfeed.store import Storage

# A deployed stack's outputs, as the settings they give.
OUTPUT_SETTINGS = {
    "SourcesTableName": "SOURCES_TABLE", "EntriesTableName": "ENTRIES_TABLE",
    "CollectionsTableName": "COLLECTIONS_TABLE", "CollectionEntriesTableName": "COLLECTION_ENTRIES_TABLE",
    "FeedsBucketName": "FEEDS_BUCKET", "RawBucketName": "RAW_BUCKET", "FetchQueueUrl": "FETCH_QUEUE_URL",
    "RenderQueueUrl": "RENDER_QUEUE_URL", "HostsTableName": "HOSTS_TABLE", "StatsTableName": "STATS_TABLE",
    "GitHubTokenStore": "STARFEED_GITHUB_TOKEN_STORE", "GitHubTokenName": "STARFEED_GITHUB_TOKEN_NAME",
    "GitHubApiUrl": "STARFEED_GITHUB_API_URL", "EnrichQueueUrl": "ENRICH_QUEUE_URL", "Analyzer": "STARFEED_ANALYZER",
    "EventBusName": "EVENT_BUS_NAME", "ApiUrl": "STARFEED_PUBLIC_URL", "HistoryQueueUrl": "HISTORY_QUEUE_URL",
    "AnalyzerDailyCalls": "STARFEED_ANALYZER_DAILY_CALLS", "AnalyzerDailyTokens": "STARFEED_ANALYZER_DAILY_TOKENS",
    "SourceSecretsPath": "STARFEED_SOURCE_SECRETS_PATH", "Proxy": "STARFEED_PROXY"}


class NoStack(Exception):
    """No starfeed to talk to: the message says how to start or name one."""


def connect(stack_name: str | None) -> Storage:
    """Storage for --stack NAME, the environment's settings, or the running local stack. A
    failure to read a named stack's outputs escapes as AWS raised it."""
    if stack_name:
        from starfeed.store.deployment import stack_outputs

        outputs = stack_outputs(stack_name)
        env = {OUTPUT_SETTINGS[k]: v.rstrip("/") for k, v in outputs.items() if k in OUTPUT_SETTINGS}
        return Storage(Settings.from_env({**os.environ, **env}))
    if os.environ.get("SOURCES_TABLE"):
        return Storage(Settings.from_env())
    env = local_stack_environment()
    if env is None:
        raise NoStack("no local stack is running: start one with `make run`, "
                      "or name a deployed one with --stack NAME")
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(key, "local")
    return Storage(Settings.from_env(env))


def fetch_settings(stack_name: str | None) -> Settings:
    """The settings `inspect` fetches with: those of the stack it would talk to, so that it
    follows that stack's STARFEED_ALLOW_PRIVATE_NETWORKS (make run allows loopback for its demo);
    the shell's environment for --stack NAME, SOURCES_TABLE, or when no local stack runs."""
    if stack_name or os.environ.get("SOURCES_TABLE"):
        return Settings.from_env()
    env = local_stack_environment()
    return Settings.from_env(env) if env else Settings.from_env()


def local_stack_environment() -> dict | None:
    """The environment of the running local stack (`make run`), or None when none runs."""
    from starfeed.local.state import STACK_FILE, state_dir

    try:
        stack_file = state_dir() / STACK_FILE
    except FileNotFoundError:
        stack_file = Path(".starfeed/local") / STACK_FILE
    try:
        state = json.loads(stack_file.read_text())
    except (OSError, ValueError):
        return None
    pid = state.get("pid")
    if isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None  # left behind by a stack that was killed: nothing answers there
        except PermissionError:
            pass  # alive, another user's
    return state.get("environment") or None
