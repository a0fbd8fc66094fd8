"""The starfeed command line: manage sources of the local stack or of a deployed one."""

from __future__ import annotations

import argparse
import json
from collections import Counter
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
        code = args.action(args) or 0
        sys.stdout.flush()  # inside the try: a reader that has gone (`| head`) ends us quietly
        return code
    except CliError as exc:
        print(f"starfeed: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader closed the pipe (`starfeed source list | head`): stop quietly, and keep the
        # interpreter's last flush from complaining on the way out.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - one line a person can act on, not a traceback
        if os.environ.get("STARFEED_DEBUG"):
            raise
        print(f"starfeed: {_describe(exc)}", file=sys.stderr)
        return 1


def _describe(exc: Exception) -> str:
    """An unexpected failure in one line: AWS's own words where it spoke, else the exception's."""
    cause = getattr(exc, "cause", None) or exc.__cause__ or exc  # PynamoDB wraps botocore's errors
    name = type(cause).__name__
    text = " ".join(str(cause).split())[:300]
    if name in ("EndpointConnectionError", "ConnectionClosedError", "ConnectTimeoutError"):
        return (f"cannot reach the stack's AWS endpoint ({text}): is `make run` still running? "
                "For a deployed stack, check --stack NAME and your network")
    if name in ("NoCredentialsError", "PartialCredentialsError"):
        return "no AWS credentials: configure them (aws configure, AWS_PROFILE) to manage a deployed stack"
    if name == "ClientError" or "ResourceNotFound" in text:
        return f"AWS refused the request: {text}; check --stack NAME and your AWS credentials"
    return f"unexpected {name}: {text} (STARFEED_DEBUG=1 shows where)"


def _local_stack_environment() -> dict | None:
    """The environment of the running local stack (`make run`), or None when none runs."""
    from starfeed.local.stack import STACK_FILE, state_dir

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


def connect(stack_name: str | None):
    """Storage for --stack NAME, the environment's settings, or the running local stack."""
    from starfeed.store import Storage

    if stack_name:
        import boto3

        try:
            stack = boto3.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
        except Exception as exc:  # noqa: BLE001 - one line: which stack, and why
            raise CliError(f"cannot read the stack {stack_name}: {_describe(exc)}") from None
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        env = {OUTPUT_SETTINGS[k]: v for k, v in outputs.items() if k in OUTPUT_SETTINGS}
        return Storage(Settings.from_env({**os.environ, **env}))
    if os.environ.get("SOURCES_TABLE"):
        return Storage(Settings.from_env())
    env = _local_stack_environment()
    if env is None:
        raise CliError("no local stack is running: start one with `make run`, "
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
    env = _local_stack_environment()
    return Settings.from_env(env) if env else Settings.from_env()


def _source_add(args) -> None:
    from starfeed.sources import BadSource, add_source, new_source, subscribed

    kind = "website" if args.website else "feed"
    try:  # a URL starfeed cannot take is refused before anything is fetched
        new_source(args.url, 0, args.collection, kind=kind, backfill=args.backfill)
    except BadSource as exc:
        raise CliError(str(exc)) from None
    storage = connect(args.stack)
    existing = subscribed(storage, [args.url]).get(args.url.strip())
    if existing is not None:
        print(f"already subscribed: {existing.source_id} {existing.url}")
        return
    inspection, url = None, args.url
    if not args.no_check:
        checked = _check(args.url, storage.settings, args.pick, website=args.website, backfill=args.backfill)
        if checked is None:
            return  # --pick alone: the page's feeds are listed, nothing is subscribed
        url, inspection = checked
    try:
        source, created = add_source(storage, url, time.time(), args.collection, kind=kind,
                                     enforce_feed_domain=args.enforce_domain, backfill=args.backfill)
    except BadSource as exc:
        raise CliError(str(exc)) from None
    if not created:
        print(f"already subscribed: {source.source_id} {source.url}")
        return
    print(f"added {source.source_id} {source.url}")
    _relist(storage)
    if inspection is not None:
        from starfeed.inspect import first_fetch, found

        print(f"found: {found(inspection)}")
        print(f"first fetch: {first_fetch(inspection, args.backfill)}")
    print("due now: the next scheduler run fetches it" + (" (not checked: --no-check)" if args.no_check else ""))


def _check(url: str, settings: Settings, pick: int | None, *, website: bool = False, backfill: int = 0):
    """Fetch the URL once, as the first fetch of a new source would: (the feed's URL, what the
    first fetch finds). An HTML page gives the feed it announces (see --pick); None when --pick
    only lists them. A URL that cannot be read is refused in one line, with --no-check to force."""
    from starfeed.fetch.http import fetch
    from starfeed.inspect import inspect_fetched
    from starfeed.parse.html import discover_feeds, looks_like_html

    result = fetch(url, settings)
    if not website and not result.error and looks_like_html(result.body, result.headers.get("Content-Type")):
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
        url = feeds[index].url
        result = fetch(url, settings)
    inspection = inspect_fetched(url, result, settings, website=website, backfill=backfill)
    if inspection.error:
        raise CliError(f"{url}: {_unsubscribed(inspection.error)}; not subscribed (fix the URL, or add --no-check "
                       "to subscribe anyway: the fetcher then retries it on its schedule)")
    return url, inspection


def _unsubscribed(error: str) -> str:
    """A fetch error as said of a URL not subscribed yet (the fetcher's advice is for sources)."""
    return error.removesuffix("; check it or remove the source")


def _inspect(args) -> int:
    from starfeed.inspect import entry_lines, inspect, summary_lines

    inspection = inspect(args.target, fetch_settings(args.stack), website=args.website,
                         unfiltered=args.all, backfill=args.backfill)
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


LIST_WIDTH = 100  # `source list` fits a 100-column terminal; --wide shows every column


def _source_list(args) -> None:
    storage = connect(args.stack)
    sources = storage.catalog.list_sources()
    if args.json:
        from dataclasses import asdict

        print(json.dumps([asdict(s) for s in sources], indent=1))
        return
    now = time.time()
    # Feeds first, then the GitHub follow list and its accounts; each group as subscribed.
    sources.sort(key=lambda s: (s.kind.startswith("github-"), s.kind != "github-following", s.created_at))
    (_wide_list if args.wide else _plain_list)(storage, sources, now)


def _plain_list(storage, sources: list, now: float) -> None:
    """At most LIST_WIDTH columns, in words: what each source is, whether it works, when it is
    next checked, and what it holds; then why the failing ones fail, in full."""
    import textwrap

    header = ("ID", "STATE", "NEXT", "ENTRIES", "DROPPED", "TITLE")
    rows = [(s.source_id, _clip(_state(s), 28), _next(s, now), f"{s.entry_count:,}",
             f"{sum(s.last_dropped.values()):,}" if s.last_dropped else "-", _name(s)) for s in sources]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    title_width = max(10, LIST_WIDTH - sum(widths) - 2 * 5)
    right = {2, 3, 4}  # numbers and times align right
    for row in [header, *rows]:
        cells = [cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))]
        print("  ".join([*cells, _clip(row[5], title_width)]).rstrip())
    if not rows:
        print("(no sources: add one with `starfeed source add URL`)")
    print()
    failing: dict[str, list[str]] = {}
    for s in sources:
        if s.enabled and s.last_error and s.status in ("error", "dead"):
            failing.setdefault(s.last_error, []).append(s.source_id)
    if failing:
        print("why they fail (`starfeed source show ID` for one source's history):")
        for error, ids in failing.items():
            named = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
            print(f"  {named}:")
            for line in textwrap.wrap(error, LIST_WIDTH - 4, break_on_hyphens=False):
                print(f"    {line}")
    if any(s.last_dropped for s in sources):
        print(textwrap.fill(
            f"DROPPED: entries the last fetch left out by seed 002's filters (older than "
            f"{storage.settings.max_article_age_days} days, or, on a first fetch, published before you "
            "subscribed); `source show ID` says which. `source add --backfill N` keeps a new "
            "source's newest N.", LIST_WIDTH))
    print(_totals(sources))
    print(_pace_short(storage.pace.load(), now))


def _wide_list(storage, sources: list, now: float) -> None:
    """Every column, as wide as it takes, and the full pace."""
    rows = [("ID", "URL", "TITLE", "STATUS", "INTERVAL", "TIER", "LAST FETCH", "NEXT CHECK", "REASON",
             "FAILURES", "ENTRIES", "DROPPED", "LAST ERROR")]
    for s in sources:
        status = s.status if s.enabled else "disabled"
        dropped = "; ".join(f"{n} {why}" for why, n in s.last_dropped.items()) or "-"
        rows.append((s.source_id, s.url, _clip(s.title or "-", 40), status,
                     _span(s.interval) if s.interval else "-", _tier(s),
                     _ago(s.last_fetch_at, now), _until(s.next_check_at, now), s.reason or "-",
                     str(s.consecutive_failures), str(s.entry_count), dropped, s.last_error or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    if len(rows) == 1:
        print("(no sources: add one with `starfeed source add URL`)")
    print(_pace_line(storage.pace.load(), now))


def _state(source) -> str:
    """A source's state in words: ok, no change, new, disabled, failing: <why>, stopped: <why>."""
    if not source.enabled:
        return "gone (410): disabled" if source.status == "gone" else "disabled"
    if source.status in ("error", "dead"):
        why = _short_error(source.last_error)
        return ("failing" if source.status == "error" else "stopped") + (f": {why}" if why else "")
    if not source.polling:
        return "polling off"
    return {"ok": "ok", "not-modified": "no change", "new": "new: not fetched yet"}.get(source.status, source.status)


_STAGES = ("fetch", "store raw", "parse", "store", "render request")


def _short_error(error: str | None) -> str:
    """The first words of an error: "404 Not Found", "could not connect", "parse error"."""
    if not error:
        return ""
    head = error.split(": ", 1)[0].split("; ", 1)[0].strip()
    return f"{head} error" if head in _STAGES else head


def _next(source, now: float) -> str:
    at = source.next_check_at
    if at is None or not source.enabled:
        return "-"
    return "now" if at <= now else "in " + _span(at - now)


def _name(source) -> str:
    """The title, else the URL without its scheme; a GitHub account says so."""
    if source.kind == "github-user":
        return f"{source.login or source.title} (GitHub stars)"
    if source.title:
        return source.title
    return source.url.split("://", 1)[-1]


def _totals(sources: list) -> str:
    states = Counter("disabled" if not s.enabled else "failing" if s.status in ("error", "dead")
                     else "new" if s.status == "new" else "ok" for s in sources)
    parts = [f"{states[k]} {k}" for k in ("ok", "new", "failing", "disabled") if states[k]]
    return (f"{len(sources)} source{'s' if len(sources) != 1 else ''}" + (f" ({', '.join(parts)})" if parts else "")
            + f"; {sum(s.entry_count for s in sources):,} entries stored")


def _pace_short(stored, now: float) -> str:
    if stored is None:
        return "pace: not set yet (the scheduler sets it hourly; --wide has the details)"
    pace, at = stored
    return (f"pace: a source posting {pace.active_per_day:.2f}+ times a day waits at most {_span(pace.horizon)}"
            f" beyond its quiet hours (set {_ago(at, now)})")


def _pace_line(stored, now: float) -> str:
    if stored is None:
        return "pace: not computed yet (the scheduler steps it hourly)"
    pace, at = stored
    return (f"pace: an active source waits at most {_span(pace.horizon)} beyond its quiet hours; active from"
            f" {pace.active_per_day:.2f} posts a day; the entry-frequency rule's p95 delay here"
            f" {_span(pace.reference)}; stepped {_ago(at, now)}")


def _source_show(args) -> None:
    """Everything about one source, the full last error and its recent fetches included."""
    storage = connect(args.stack)
    s = storage.catalog.get_source(args.id)
    if s is None:
        raise CliError(f"no source with id {args.id}: see `starfeed source list`")
    now = time.time()

    def when(epoch):
        if not isinstance(epoch, (int, float)):
            return str(epoch or "-")  # the fetch history keeps RFC 3339 times
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch)) + \
            f" ({_ago(epoch, now) if epoch <= now else _until(epoch, now)})"

    lines = [("id", s.source_id), ("url", s.url), ("title", s.title or "-"), ("kind", s.kind),
             ("site", s.site_url or "-"), ("collections", ", ".join(s.collections) or "-"),
             ("state", _state(s)), ("status", f"{s.status}" + (f", HTTP {s.http_status}" if s.http_status else "")),
             ("last error", s.last_error or "-"), ("failures", str(s.consecutive_failures)),
             ("subscribed", when(s.created_at)), ("last fetch", when(s.last_fetch_at)),
             ("last success", when(s.last_success_at)), ("next check", when(s.next_check_at)),
             ("interval", (_span(s.interval) if s.interval else "-") + (f" ({s.reason})" if s.reason else "")),
             ("tier", _tier(s)), ("policy", s.policy), ("polling", "on" if s.polling else "off"),
             ("enabled", "yes" if s.enabled else "no"), ("entries", f"{s.entry_count:,} stored"),
             ("backfill", f"the first fetch kept the newest {s.backfill}" if s.backfill else "-"),
             ("enforce domain", "yes" if s.enforce_feed_domain else "no")]
    for why, count in s.last_dropped.items():
        lines.append(("dropped", f"{count} {why} (last fetch)"))
    for fetch in s.fetch_history[:5]:
        lines.append(("fetched", f"{when(fetch.get('at'))}: {fetch.get('status') or 'no response'}, "
                                 f"{fetch.get('outcome') or '-'}"))
    for change in s.url_changes:
        lines.append(("moved", f"{change.get('from')} -> {change.get('to')} ({when(change.get('at'))})"))
    for key, value in lines:
        print(f"{key + ':':16}{value}")


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


CHECKS_IN_FLIGHT = 8  # opml import checks this many feeds at once, at most 2 per host
CHECKS_PER_HOST = 2


def _opml_import(args) -> None:
    """Every feed of an OPML file, its folders as collections: one progress line per feed, then
    what was added, what was there already, and what failed and why."""
    from starfeed.sources import BadSource, read_opml, subscribed

    try:
        document = read_opml(Path(args.file))
    except BadSource as exc:
        raise CliError(str(exc)) from None
    storage = connect(args.stack)
    feeds, total = document.feeds, len(document.feeds)
    if not total:
        print(f"{args.file} lists no feeds (no outline has an xmlUrl): nothing to import")
        return
    for folder, name in document.folders.items():
        print(f'folder "{folder}" becomes the collection {name}')
    existing = subscribed(storage, [f.url for f in feeds])
    report = _ImportReport(total)
    now = time.time()
    to_check = []
    for feed in feeds:
        outcome = _import_known(storage, feed, existing, args)
        if outcome:
            report.line(*outcome)
        else:
            to_check.append(feed)
    for feed, inspection, error in _checked(to_check, storage.settings, args):
        if error:
            report.line("failed", f"{feed.url}: {_unsubscribed(error)}")
            continue
        report.line(*_import_new(storage, feed, inspection, now, args))
    if report.counts["added"] or report.changed:
        _relist(storage, sorted(report.changed))
    report.finish(args, storage.settings)


class _ImportReport:
    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.counts = {"added": 0, "already subscribed": 0, "skipped": 0, "failed": 0}
        self.failures: list[str] = []
        self.quiet = 0  # added sources whose first fetch keeps nothing
        self.changed: set[str] = set()  # render targets (collections an existing source joined)
        self.dropped: Counter = Counter()  # what the added sources' first fetches leave out, by reason

    def line(self, outcome: str, text: str, quiet: bool = False, targets: list[str] = (),
             dropped: dict | None = None) -> None:
        self.done += 1
        self.counts[outcome] += 1
        self.quiet += quiet
        self.changed.update(targets)
        self.dropped.update(dropped or {})
        if outcome == "failed":
            self.failures.append(text)
        width = len(str(self.total))
        print(f"[{self.done:>{width}}/{self.total}] {outcome}: {text}", flush=True)

    def finish(self, args, settings) -> None:
        counts = ", ".join(f"{n} {what}" for what, n in self.counts.items() if n or what == "added")
        print(f"imported {args.file}: {counts}")
        if self.failures:
            print("not subscribed: fix those URLs, or run the import again with --no-check to "
                  "subscribe them anyway (the fetcher retries them on their schedules)")
        if self.dropped:
            from starfeed.inspect import rule_of

            left_out = ", ".join(f"{n:,} {reason}" + (f" ({rule_of(reason)})" if rule_of(reason) else "")
                                 for reason, n in self.dropped.most_common())
            quiet = f"{self.quiet} of the {self.counts['added']} added show nothing until they publish " \
                    "again; " if self.quiet else ""
            print(f"{quiet}their first fetches leave out entries: {left_out}; "
                  + (f"--backfill {args.backfill} keeps the newest {args.backfill} of each" if args.backfill
                     else "--backfill N keeps the newest N of each new source"))
        if self.counts["added"]:
            print(f"their first fetches are spread over the next {settings.startup_jitter} s")


def _import_known(storage, feed, existing: dict, args):
    """The outcome for a feed that needs no check: this starfeed's own feeds, a URL starfeed
    cannot take, one subscribed already (it joins the file's folders it was not in); else None."""
    from starfeed.render import targets_for
    from starfeed.sources import BadSource, github_following_source, new_source, own_feed

    target = own_feed(feed.url, storage.settings.public_url)
    if target == "c/github/feed":
        following = github_following_source(storage.settings, 0)
        if storage.catalog.get_source(following.source_id):
            return "already subscribed", f"{feed.url}: starfeed's own GitHub feed, of the accounts you follow"
        return "skipped", (f"{feed.url}: starfeed's own GitHub feed; `starfeed github connect` "
                           "follows the stars of the accounts you follow")
    own = storage.catalog.get_source(target[2:-5]) if target and target.startswith("s/") else None
    if own is not None:  # as /subscriptions.opml lists a website source
        return "already subscribed", f"{own.source_id} {own.url} (starfeed's own feed of it: {feed.url})"
    if target and target.startswith("s/"):
        return "skipped", f"{feed.url}: starfeed's own feed of a source it no longer has"
    if target:
        return "skipped", f"{feed.url}: one of starfeed's own feeds; subscribing would loop its entries back"
    try:
        new_source(feed.url, 0, feed.collections, backfill=args.backfill)
    except BadSource as exc:
        return "failed", str(exc)
    source = existing.get(feed.url.strip())
    if source is None:
        return None
    joined = [c for c in feed.collections if c not in source.collections]
    if not joined:
        return "already subscribed", f"{source.source_id} {source.url}"
    collections = [*source.collections, *joined]
    storage.catalog.change_source(source.source_id, {"collections": collections})
    for collection in joined:
        storage.catalog.join_collection(collection, source.source_id)
    source.collections = collections
    return ("already subscribed", f"{source.source_id} {source.url}, now also in {', '.join(joined)}",
            False, targets_for(source))


def _checked(feeds: list, settings: Settings, args):
    """(feed, inspection, error) for each feed, as its check completes: CHECKS_IN_FLIGHT at once,
    CHECKS_PER_HOST per host. With --no-check, at once and without a fetch."""
    if args.no_check:
        for feed in feeds:
            yield feed, None, None
        return
    import threading
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from starfeed.fetch.http import fetch
    from starfeed.inspect import inspect_fetched
    from starfeed.model import host_key_of
    from starfeed.parse.html import looks_like_html

    hosts: dict[str, threading.Semaphore] = {}
    lock = threading.Lock()

    def check(feed):
        with lock:
            per_host = hosts.setdefault(host_key_of(feed.url), threading.Semaphore(CHECKS_PER_HOST))
        with per_host:
            result = fetch(feed.url, settings)
        if not result.error and looks_like_html(result.body, result.headers.get("Content-Type")):
            return None, ("an HTML page, not a feed: `starfeed source add URL` subscribes to the feed "
                          "it announces")
        inspection = inspect_fetched(feed.url, result, settings, backfill=args.backfill)
        return inspection, inspection.error

    pool = ThreadPoolExecutor(CHECKS_IN_FLIGHT)
    try:
        futures = {pool.submit(check, feed): feed for feed in feeds}
        for future in as_completed(futures):
            try:
                inspection, error = future.result()
            except Exception as exc:  # noqa: BLE001 - that feed's failure, not the import's
                inspection, error = None, _describe(exc)
            yield futures[future], inspection, error
    finally:  # Ctrl+C, or a failure writing a source: the checks not started are not made
        pool.shutdown(wait=False, cancel_futures=True)


def _import_new(storage, feed, inspection, now: float, args) -> tuple:
    from starfeed.sources import BadSource, add_source

    try:
        source, created = add_source(storage, feed.url, now, feed.collections,
                                     jitter=storage.settings.startup_jitter, backfill=args.backfill)
    except BadSource as exc:
        return "failed", str(exc)
    where = f" in {', '.join(source.collections)}" if source.collections else ""
    if not created:
        return "already subscribed", f"{source.source_id} {source.url}{where}"
    if inspection is None:
        return "added", f"{source.source_id} {source.url}{where} (not checked)"
    from starfeed.inspect import found, kept_words

    ingested = inspection.ingested
    return "added", f"{source.source_id} {source.url}{where}: {found(inspection)}, {kept_words(inspection)}", \
        bool(ingested.parsed_count) and not ingested.entries, (), ingested.dropped


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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        """One line, with where to read more, instead of the usage block."""
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="starfeed", description=__doc__)
    parser.add_argument("--stack", metavar="NAME",
                        help="a deployed CloudFormation stack (default: the local stack of `make run`)")
    commands = parser.add_subparsers(dest="command", required=True)

    source = commands.add_parser("source", help="manage sources").add_subparsers(dest="verb", required=True)
    add = source.add_parser("add", help="subscribe to a feed URL (checked once first)",
                            description="Subscribe to a feed. The URL is fetched once first, as the "
                            "first fetch will be: the reply says its format, title and entries, and "
                            "how many the first fetch keeps (seed 002 leaves out what was published "
                            "before you subscribed, and anything older than 7 days). A URL that "
                            "cannot be read is not subscribed.")
    add.add_argument("url")
    add.add_argument("--collection", action="append", help="put the source in a collection (repeatable)")
    add.add_argument("--backfill", type=_count, default=0, metavar="N",
                     help="keep the newest N entries of the first fetch whatever their dates "
                          "(default 0: seed 002's filters alone)")
    add.add_argument("--no-check", action="store_true",
                     help="subscribe without fetching first (no check, no feed discovery on an HTML page)")
    add.add_argument("--pick", type=int, metavar="N", nargs="?", const=0,
                     help="for an HTML page: list the feeds it announces (no N), or take the Nth")
    add.add_argument("--website", action="store_true",
                     help="follow the page's main article instead of a feed (seed 002)")
    add.add_argument("--enforce-domain", action="store_true",
                     help="drop items that link off the feed's host (seed 004; off by default)")
    add.set_defaults(action=_source_add)
    listing = source.add_parser("list", help="every source: state, next check, entries (100 columns)")
    shape = listing.add_mutually_exclusive_group()
    shape.add_argument("--wide", action="store_true",
                       help="every column: URL, interval, tier, the scheduler's reason, failures, "
                            "the full last error, and the full pace")
    shape.add_argument("--json", action="store_true", help="every field, as one JSON array")
    listing.set_defaults(action=_source_list)
    show = source.add_parser("show", help="everything about one source: its full last error, "
                             "what the filters dropped, its recent fetches")
    show.add_argument("id")
    show.set_defaults(action=_source_show)
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
    inspect.add_argument("--backfill", type=_count, default=0, metavar="N",
                         help="as for a new source added with --backfill N")
    inspect.set_defaults(action=_inspect)

    opml = commands.add_parser("opml", help="OPML import").add_subparsers(dest="verb", required=True)
    imp = opml.add_parser("import", help="subscribe to every feed in an OPML file, folders as collections",
                          description="Subscribe to every feed of an OPML file (any reader's export). "
                          "Its folders become collections (a folder path such as Tech/Python becomes "
                          "tech-python). Each feed is checked once first, as `source add` does: "
                          f"{CHECKS_IN_FLIGHT} at a time, {CHECKS_PER_HOST} per host (500 feeds that answer within "
                          "a second take about a minute); one that cannot be read is not subscribed. "
                          "--no-check subscribes every feed at once without fetching.")
    imp.add_argument("file")
    imp.add_argument("--backfill", type=_count, default=0, metavar="N",
                     help="keep the newest N entries of each new source's first fetch")
    imp.add_argument("--no-check", action="store_true",
                     help="subscribe without fetching each feed first (fast; failures show later in "
                          "`source list`)")
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


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"a number of entries, 0 or more: {text!r}")
    return value


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
