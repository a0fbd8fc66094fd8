"""The starfeed command line: manage sources of the local stack or of a deployed one."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from starfeed.render import targets_for
from starfeed.schedule.github import TIERS, tier_of
from starfeed.settings import Settings

OUTPUT_SETTINGS = {"SourcesTableName": "SOURCES_TABLE", "EntriesTableName": "ENTRIES_TABLE",
                   "CollectionsTableName": "COLLECTIONS_TABLE", "FeedsBucketName": "FEEDS_BUCKET",
                   "RawBucketName": "RAW_BUCKET", "FetchQueueUrl": "FETCH_QUEUE_URL",
                   "RenderQueueUrl": "RENDER_QUEUE_URL", "HostsTableName": "HOSTS_TABLE",
                   "StatsTableName": "STATS_TABLE", "GitHubTokenStore": "STARFEED_GITHUB_TOKEN_STORE",
                   "GitHubTokenName": "STARFEED_GITHUB_TOKEN_NAME", "GitHubApiUrl": "STARFEED_GITHUB_API_URL"}


class CliError(Exception):
    pass


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.action(args) or 0
    except CliError as exc:
        print(f"starfeed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def connect(stack_name: str | None):
    """Storage for --stack NAME, the environment's settings, or the running local stack."""
    from starfeed.store import Storage

    if stack_name:
        import boto3

        stack = boto3.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        env = {OUTPUT_SETTINGS[k]: v for k, v in outputs.items() if k in OUTPUT_SETTINGS}
        return Storage(Settings.from_env({**os.environ, **env}))
    if os.environ.get("SOURCES_TABLE"):
        return Storage(Settings.from_env())
    from starfeed.local.stack import STACK_FILE, state_dir

    try:
        stack_file = state_dir() / STACK_FILE
    except FileNotFoundError:
        stack_file = Path(".starfeed/local") / STACK_FILE
    if not stack_file.exists():
        raise CliError("no local stack is running: start one with `make run`, "
                       "or name a deployed one with --stack NAME")
    env = json.loads(stack_file.read_text())["environment"]
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(key, "local")
    return Storage(Settings.from_env(env))


def _source_add(args) -> None:
    from starfeed.sources import BadSource, add_source

    url = args.url if args.website else _discover(args.url, args.pick)
    if url is None:
        return
    storage = connect(args.stack)
    try:
        source, created = add_source(storage, url, time.time(), args.collection,
                                     kind="website" if args.website else "feed",
                                     enforce_feed_domain=args.enforce_domain)
    except BadSource as exc:
        raise CliError(str(exc)) from None
    verb = "added" if created else "already subscribed:"
    print(f"{verb} {source.source_id} {source.url}")
    if created:
        _relist(storage)
        print("it is due now: the next scheduler run fetches it")


def _discover(url: str, pick: int | None) -> str | None:
    """The feed to subscribe to: the URL itself, or a feed its HTML page announces."""
    from starfeed.fetch.http import fetch
    from starfeed.parse.html import discover_feeds, looks_like_html

    result = fetch(url, Settings.from_env())
    if result.error or not looks_like_html(result.body, result.headers.get("Content-Type")):
        return url  # a feed, or a failure the fetcher will record with its reason
    feeds = discover_feeds(result.body, result.url)
    if not feeds:
        raise CliError(f"{url} is an HTML page that announces no feed; "
                       "subscribe with --website to follow its main article")
    if pick is None and len(feeds) > 1 or pick == 0:
        for n, feed in enumerate(feeds, start=1):
            print(f"{n}. {feed.kind:4} {feed.url}" + (f"  ({feed.title})" if feed.title else ""))
        if pick == 0:
            return None
        print(f"subscribing to the first; choose another with --pick N (1-{len(feeds)})")
    index = (pick or 1) - 1
    if not 0 <= index < len(feeds):
        raise CliError(f"--pick {pick}: the page announces {len(feeds)} feed(s)")
    return feeds[index].url


def _inspect(args) -> int:
    from starfeed.inspect import entry_lines, inspect, summary_lines

    inspection = inspect(args.target, Settings.from_env(), website=args.website, unfiltered=args.all)
    if inspection.error:
        print(f"starfeed: {args.target}: {inspection.error}", file=sys.stderr)
        return 1
    if args.json:
        for line in entry_lines(inspection):
            print(line)
    else:
        for entry in inspection.ingested.entries:
            print(f"{entry.sort_time}  {_clip(entry.title or '(untitled)', 60)}  {entry.canonical_link or ''}")
    for line in summary_lines(inspection):
        print(line, file=sys.stderr)
    return 0


def _source_list(args) -> None:
    storage = connect(args.stack)
    sources = storage.catalog.list_sources()
    if args.json:
        from dataclasses import asdict

        print(json.dumps([asdict(s) for s in sources], indent=1))
        return
    now = time.time()
    rows = [("ID", "URL", "TITLE", "STATUS", "INTERVAL", "TIER", "LAST FETCH", "NEXT CHECK", "REASON",
             "FAILURES", "LAST ERROR")]
    for s in sources:
        status = s.status if s.enabled else "disabled"
        rows.append((s.source_id, s.url, _clip(s.title or "-", 30), status,
                     _span(s.interval) if s.interval else "-", _tier(s),
                     _ago(s.last_fetch_at, now), _until(s.next_check_at, now), s.reason or "-",
                     str(s.consecutive_failures), s.last_error or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    if len(rows) == 1:
        print("(no sources: add one with `starfeed source add URL`)")
    print(_pace_line(storage.pace.load(), now))


def _pace_line(stored, now: float) -> str:
    if stored is None:
        return "pace: not computed yet (the scheduler steps it hourly)"
    pace, at = stored
    return (f"pace: an active source waits at most {_span(pace.horizon)} beyond its quiet hours; active from"
            f" {pace.active_per_day:.2f} posts a day; the entry-frequency rule's p95 delay here"
            f" {_span(pace.reference)}; stepped {_ago(at, now)}")


def _tier(source) -> str:
    """A GitHub account's tier is seed 000's label (low until three stars); a feed's follows its
    interval; the follow list has none."""
    if source.kind == "github-following" or not (source.tier or source.interval):
        return "-"
    return source.tier or tier_of(source.interval / 60)


def _source_sync(args) -> None:
    """Seed 004's resurrection: due now, error, failures and lease cleared; refused when disabled."""
    storage = connect(args.stack)
    changes = {"next_check_at": time.time(), "last_error": None, "locked_until": None,
               "consecutive_failures": 0}
    if not storage.catalog.change_source(args.id, changes, require_enabled=True):
        source = storage.catalog.get_source(args.id)
        raise CliError(f"no source with id {args.id}" if source is None
                       else f"{args.id} is disabled: `starfeed source enable {args.id}` first")
    print(f"{args.id} is due now: the next scheduler run fetches it")


def _source_set(args) -> None:
    value = getattr(args, "value", None)
    field, value, said = {
        "enable": ("enabled", True, "enabled (its schedule is as it was)"),
        "disable": ("enabled", False, "disabled: never fetched, its feed answers 403 now, and its "
                                      "entries leave the other feeds at the next render"),
        "polling": ("polling", value == "on", f"polling {value}"),
        "policy": ("policy", value, f"failure policy {value}"),
    }[args.verb]
    storage = connect(args.stack)
    if not storage.catalog.change_source(args.id, {field: value}):
        raise CliError(f"no source with id {args.id}: see `starfeed source list`")
    if field == "enabled":
        _rerender(storage, storage.catalog.get_source(args.id))
    print(f"{args.id}: {said}")


def _rerender(storage, source) -> None:
    """Every feed the source appears in, its own included (the renderer deletes that one when the
    source is gone or disabled), and the views that list every source."""
    if source is not None:
        _relist(storage, targets_for(source))


def _relist(storage, targets: list[str] = ()) -> None:
    """Render these targets and the views that list every source (/subscriptions.opml, /stats)."""
    from starfeed.render import SOURCES_SUMMARY

    if storage.settings.render_queue_url:
        storage.queues.send_render([*targets, SOURCES_SUMMARY])


def _source_remove(args) -> None:
    storage = connect(args.stack)
    source = storage.catalog.get_source(args.id)
    if source is None or not storage.catalog.delete_source(args.id):
        raise CliError(f"no source with id {args.id}: see `starfeed source list`")
    _rerender(storage, source)
    print(f"removed {args.id}: its feed answers 404 now, and its entries leave the other feeds at the "
          "next render (they expire from the store with their TTL)")


def _opml_import(args) -> None:
    from starfeed.sources import BadSource, add_source, opml_feed_urls

    try:
        urls = opml_feed_urls(Path(args.file))
    except BadSource as exc:
        raise CliError(str(exc)) from None
    storage = connect(args.stack)
    now = time.time()
    added = 0
    for url in urls:
        try:
            added += add_source(storage, url, now, jitter=storage.settings.startup_jitter)[1]
        except BadSource as exc:
            print(f"skipped: {exc}", file=sys.stderr)
    if added:
        _relist(storage)
    print(f"imported {added} new sources of {len(urls)} in {args.file}; their first fetches are "
          f"spread over {storage.settings.startup_jitter} s")


def _github_connect(args) -> None:
    """Check the token with GitHub, store it where the deployment reads it, and resume polling."""
    import getpass

    from starfeed.fetch.github import GitHub

    token = sys.stdin.readline().strip() if args.token_stdin else getpass.getpass("GitHub token: ").strip()
    if not token:
        raise CliError("no token given")
    storage = connect(args.stack)
    github = GitHub(storage.settings, lambda force: token)
    page = github.get(github.url("/user"))
    if page.verdict.kind != "ok":
        raise CliError(f"{storage.settings.github_api_url} did not accept this token: "
                       f"{page.verdict.reason}; nothing was stored")
    try:
        login = json.loads(page.result.body)["login"]
    except (ValueError, KeyError, TypeError):
        login = "an account GitHub did not name"
    where = storage.secrets.put_github_token(token)
    print(f"token for {login} stored in {where}")
    _resume_github(storage)


def _resume_github(storage) -> None:
    """Lift a stop, and make the follow list due now (creating its source the first time), with
    every account the stop held."""
    from starfeed.sources import GITHUB_COLLECTION, GITHUB_PAGES, github_following_source

    catalog, now = storage.catalog, time.time()
    pause = catalog.host_pause(storage.settings.github_host, now)
    held = {"github-token-rejected"}
    if pause and pause["stopped"]:
        catalog.clear_host_pause(storage.settings.github_host)
        held.add("host-paused")
        if storage.settings.render_queue_url:
            storage.queues.send_render(GITHUB_PAGES)  # the pages stop saying it stopped
        print("GitHub polling resumes (it had stopped: the token was rejected)")
    following = github_following_source(storage.settings, now)
    if catalog.add_source(following):
        print(f"added {following.source_id} {following.url}")
    users = catalog.sources_of_collection(GITHUB_COLLECTION).values()
    for source in [catalog.get_source(following.source_id), *users]:
        if source and (source.kind == "github-following" or source.reason in held):
            catalog.change_source(source.source_id, {"next_check_at": now, "locked_until": None,
                                                     "last_error": None}, require_enabled=True)
    print("the follow list is due now: the next scheduler run syncs it")


def _github_sync(args) -> None:
    _resume_github(connect(args.stack))


def _github_status(args) -> None:
    from collections import Counter

    from starfeed.render.html import github_notice

    storage = connect(args.stack)
    catalog, settings, now = storage.catalog, storage.settings, time.time()
    print(f"API: {settings.github_api_url}")
    state = catalog.host_state(settings.github_host)
    rate = state.get("rate_limit")
    print("rate limit: " + (f"{rate['remaining']:,} of {rate['limit']:,} left, resets "
                            f"{time.strftime('%H:%M:%S UTC', time.gmtime(rate['reset']))} "
                            f"(seen {_span(now - rate['at'])} ago)" if rate else "not seen yet"))
    print("pause: " + (github_notice(catalog.host_pause(settings.github_host, now)) or "none"))
    sources = [s for s in catalog.list_sources() if s.kind.startswith("github-")]
    following = next((s for s in sources if s.kind == "github-following"), None)
    if following is None:
        print("follow list: not connected: run `starfeed github connect`")
    else:
        print(f"follow list: {following.title}, synced {_ago(following.last_success_at, now)}, "
              f"next {_until(following.next_check_at, now)}")
    users = [s for s in sources if s.kind == "github-user"]
    tiers = Counter(s.tier or "low" for s in users if s.enabled)
    print(f"users: {sum(tiers.values())} followed ({', '.join(f'{tiers[t]} {t}' for t in TIERS)}), "
          f"{sum(1 for s in users if not s.enabled)} no longer followed, {sum(s.entry_count for s in users)} stars")
    failed = sorted((s for s in sources if s.last_error), key=lambda s: s.last_fetch_at or 0)
    print("last error: " + (f"{failed[-1].last_error} ({failed[-1].title}, {_ago(failed[-1].last_fetch_at, now)})"
                            if failed else "none"))


def _local_run(args) -> int:
    from starfeed.local.run import run

    return run()


def _local_reset(args) -> None:
    from starfeed.local.snapshot import SNAPSHOT_FILE, move_aside
    from starfeed.local.stack import state_dir

    path = state_dir() / SNAPSHOT_FILE
    if not path.exists():
        print(f"no saved state in {path.parent}: the next start is empty anyway")
        return
    print(f"moved the saved state to {move_aside(path, 'reset')}; the next start is empty")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="starfeed", description=__doc__)
    parser.add_argument("--stack", metavar="NAME",
                        help="a deployed CloudFormation stack (default: the local stack of `make run`)")
    commands = parser.add_subparsers(dest="command", required=True)

    source = commands.add_parser("source", help="manage sources").add_subparsers(dest="verb", required=True)
    add = source.add_parser("add", help="subscribe to a feed URL")
    add.add_argument("url")
    add.add_argument("--collection", action="append", help="put the source in a collection (repeatable)")
    add.add_argument("--pick", type=int, metavar="N", nargs="?", const=0,
                     help="for an HTML page: list the feeds it announces (no N), or take the Nth")
    add.add_argument("--website", action="store_true",
                     help="follow the page's main article instead of a feed (seed 002)")
    add.add_argument("--enforce-domain", action="store_true",
                     help="drop items that link off the feed's host (seed 004; off by default)")
    add.set_defaults(action=_source_add)
    listing = source.add_parser("list", help="every source with its status and schedule")
    listing.add_argument("--json", action="store_true", help="one JSON array instead of a table")
    listing.set_defaults(action=_source_list)
    sync = source.add_parser("sync", help="fetch now: clear the error and the lease (not when disabled)")
    sync.add_argument("id")
    sync.set_defaults(action=_source_sync)
    for verb, text in (("enable", "fetch and serve it again"), ("disable", "stop fetching and serving it")):
        toggle = source.add_parser(verb, help=text)
        toggle.add_argument("id")
        toggle.set_defaults(action=_source_set)
    polling = source.add_parser("polling", help="off: the next fetch is the last (seed 004)")
    polling.add_argument("id")
    polling.add_argument("value", choices=("on", "off"))
    polling.set_defaults(action=_source_set)
    policy = source.add_parser("policy", help="on failure: backoff (default) or one-strike")
    policy.add_argument("id")
    policy.add_argument("value", choices=("backoff", "one-strike"))
    policy.set_defaults(action=_source_set)
    remove = source.add_parser("remove", help="unsubscribe")
    remove.add_argument("id")
    remove.set_defaults(action=_source_remove)

    inspect = commands.add_parser("inspect", help="fetch and parse a feed as the fetcher would, "
                                  "storing nothing")
    inspect.add_argument("target", metavar="URL|FILE")
    inspect.add_argument("--json", action="store_true",
                         help="one JSON object per entry on stdout; the summary on stderr")
    inspect.add_argument("--website", action="store_true", help="read it as a website source")
    inspect.add_argument("--all", action="store_true",
                         help="every parsed entry, without the filters a new source applies")
    inspect.set_defaults(action=_inspect)

    opml = commands.add_parser("opml", help="OPML import").add_subparsers(dest="verb", required=True)
    imp = opml.add_parser("import", help="subscribe to every feed in an OPML file")
    imp.add_argument("file")
    imp.set_defaults(action=_opml_import)

    github = commands.add_parser("github", help="the GitHub stars of everyone you follow (seed 000)") \
        .add_subparsers(dest="verb", required=True)
    github_connect = github.add_parser("connect", help="check a token with GitHub and store it where "
                                       "the deployment reads it; resumes stopped polling")
    github_connect.add_argument("--token-stdin", action="store_true",
                                help="read the token from standard input instead of prompting")
    github_connect.set_defaults(action=_github_connect)
    github.add_parser("sync", help="sync the follow list now").set_defaults(action=_github_sync)
    github.add_parser("status", help="rate limit, any pause, users by tier, the last error") \
        .set_defaults(action=_github_status)

    local = commands.add_parser("local", help="the local stack").add_subparsers(dest="verb", required=True)
    local.add_parser("run", help="run starfeed on an embedded AWS (what `make run` does)") \
        .set_defaults(action=_local_run)
    local.add_parser("reset", help="start clean next time (the old state is moved aside)") \
        .set_defaults(action=_local_reset)
    return parser


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def _ago(epoch: float | None, now: float) -> str:
    return "never" if epoch is None else _span(now - epoch) + " ago"


def _until(epoch: float | None, now: float) -> str:
    if epoch is None:
        return "not scheduled"
    return "due now" if epoch <= now else "in " + _span(epoch - now)


def _span(seconds: float) -> str:
    seconds = int(max(0, seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


if __name__ == "__main__":
    sys.exit(main())
