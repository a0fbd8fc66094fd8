"""starfeed source add | list | show | set | sync | enable | disable | polling | policy | deframe | prompt |
remove | restore | purge."""

from __future__ import annotations

import json
import shlex
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from starfeed import subscribe
from starfeed.cli.common import (
    SELECTOR_OPTIONS,
    CliError,
    add_request_options,
    add_selector_options,
    ago,
    asked_of,
    clip,
    connect,
    count,
    selectors_of,
    span,
    until,
)
from starfeed.enrich.analysis import prompt_for
from starfeed.fetch.options import described
from starfeed.fetch.options import shown as shown_options
from starfeed.fetch.stage import STAGES
from starfeed.kinds.github import announced, live_timelines
from starfeed.kinds.registry import kind_of
from starfeed.model import FailureClass, RequestOptions, Status, failure_words, outcome_of
from starfeed.subscribe import Refused


def add_commands(commands) -> None:
    source = commands.add_parser("source", help="manage sources").add_subparsers(dest="verb", required=True)
    add = source.add_parser("add", help="subscribe to a feed URL (checked once first)",
                            description="Subscribe to a feed. The URL is fetched once first, as the "
                            "first fetch will be: the reply says its format, title and entries, and "
                            "how many the first fetch keeps (a new subscription leaves out what was "
                            "published before it, and anything older than 7 days). A URL that "
                            "cannot be read is not subscribed.")
    add.add_argument("url")
    add.add_argument("--collection", action="append", help="put the source in a collection (repeatable)")
    add.add_argument("--backfill", type=count, default=0, metavar="N",
                     help="keep the newest N entries of the first fetch whatever their dates "
                          "(default 0: the date filters alone)")
    add.add_argument("--no-check", action="store_true",
                     help="subscribe without fetching first (no check, no feed discovery on an HTML page)")
    add.add_argument("--pick", type=int, metavar="N", nargs="?", const=0,
                     help="for an HTML page: list the feeds it announces (no N), or take the Nth")
    add.add_argument("--website", action="store_true",
                     help="follow the page's main article instead of a feed")
    add.add_argument("--enforce-domain", action="store_true",
                     help="drop items that link off the feed's host (off by default)")
    add.add_argument("--no-root-domain", action="store_true",
                     help="leave its root domain empty instead of taking it from the URL "
                          "(`starfeed root-domain set` gives one later)")
    add.add_argument("--history", action="store_true",
                     help="also import the feed's archive (RFC 5005 rel=prev-archive or rel=next), once, "
                          "whatever its dates")
    add.add_argument("--deframe", action="store_true",
                     help="analyze each new entry: a deframed title, a neutral summary, the "
                          "facts and a framing score, served in its feeds")
    add_selector_options(add, "Subscribe to a page that publishes no feed: each item the --items selector "
                         "finds is an entry, with what --title, --link and, if given, --date and --summary "
                         "find inside it. `starfeed inspect URL --items SEL ...` tries them first.")
    add_request_options(add, "How the source is asked for, when a site refuses starfeed's plain requests "
                        "(`starfeed inspect URL` takes them too, to try them first).")
    add.set_defaults(action=_add)
    listing = source.add_parser("list", help="every source: state, polling, next check, entries, root "
                                "domain (100 columns); removed sources with --deleted")
    listing.add_argument("--deleted", action="store_true",
                         help="only the removed sources, with when they were removed")
    shape = listing.add_mutually_exclusive_group()
    shape.add_argument("--wide", action="store_true",
                       help="every column: URL, interval, tier, the scheduler's reason, failures, "
                            "the full last error, and the full pace")
    shape.add_argument("--json", action="store_true",
                       help="every field, as one JSON array (removed sources included, with deleted_at), and "
                            "`blocked`: the stored entries rules hold back")
    shape.add_argument("--blocked", action="store_true",
                       help="the stored entries rules hold back, by source, with the rule that blocked each")
    listing.set_defaults(action=_list)
    _on_one_source(source, "show", _show, "everything about one source: its full last error, "
                   "what the filters dropped, its recent fetches")
    setting = _on_one_source(source, "set", _set_source, "change a source's request options, or the CSS "
                             "selectors a page without a feed is read by (checked on the page first)")
    add_selector_options(setting, "Only the selectors given change; an empty --date or --summary removes "
                         "it. The page is read once with them first, and they are refused when one finds "
                         "nothing; its next fetch reads it whole.")
    add_request_options(setting, "Only the options given change; the source is fetched once with them first, "
                        "and they are refused when it cannot be read so.", clearing=True)
    setting.add_argument("--no-check", action="store_true", help="change them without fetching first")
    _on_one_source(source, "sync", _sync, "fetch now: clear the error and the lease (not when disabled)")
    for verb, text in (("enable", "fetch and serve it again"), ("disable", "stop fetching and serving it")):
        _on_one_source(source, verb, _set, text)
    for verb, text, choices in (
            ("polling", "off: the next fetch is the last", ("on", "off")),
            ("policy", "on failure: backoff (default) or one-strike", ("backoff", "one-strike")),
            ("deframe", "on: analyze each new entry and serve the results", ("on", "off"))):
        _on_one_source(source, verb, _set, text).add_argument("value", choices=choices)
    prompt = _on_one_source(source, "prompt", _prompt, "the analyzer's system prompt for this source, from a file")
    which = prompt.add_mutually_exclusive_group(required=True)
    which.add_argument("file", nargs="?", help="a UTF-8 text file holding the prompt")
    which.add_argument("--clear", action="store_true", help="back to the default prompt")
    _on_one_source(source, "backfill", _backfill, "import the feed's archive once (RFC 5005), whatever its "
                   "dates: `source list` shows how far it got")
    _on_one_source(source, "remove", _remove, "unsubscribe: never fetched or served again, kept until "
                   "purged (restore undoes it)")
    _on_one_source(source, "restore", _restore, "undo remove: fetched now, and served again")
    _on_one_source(source, "purge", _purge, "delete a removed source and its stored entries for good")


def _on_one_source(verbs, verb: str, action, text: str):
    """A verb that acts on the source its one argument names; its parser, for more arguments."""
    parser = verbs.add_parser(verb, help=text)
    parser.add_argument("id")
    parser.set_defaults(action=action)
    return parser


def _add(args) -> None:
    storage = connect(args.stack)
    try:
        done = subscribe.subscribe_url(storage, args.url, time.time(), collections=args.collection,
                                       backfill=args.backfill, website=args.website, pick=args.pick,
                                       no_check=args.no_check, enforce_domain=args.enforce_domain,
                                       no_root_domain=args.no_root_domain, deframe=args.deframe,
                                       selectors=selectors_of(args), asked=asked_of(args))
    except Refused as exc:
        raise CliError(str(exc)) from None
    source, checked = done.source, done.checked
    walk = None
    if args.history and source is not None:  # asked for before anything is printed: a closed pipe cannot lose it
        walk = _walk(storage, source.source_id)
    if checked is not None and (done.outcome == "listed" or checked.picked_first):
        for n, feed in enumerate(checked.feeds, start=1):
            print(f"{n}. {feed.kind:4} {feed.url}" + (f"  ({feed.title})" if feed.title else ""))
        if checked.picked_first:
            print(f"subscribing to the first; choose another with --pick N (1-{len(checked.feeds)})")
    if done.outcome == "listed":
        return  # --pick alone: the page's feeds are listed, nothing is subscribed
    if done.outcome in ("already subscribed", "restored"):
        print(f"already subscribed: {source.source_id} {source.url}" if done.outcome == "already subscribed" else
              f"restored {source.source_id} {source.url}: it had been removed; due now, and served again"
              + ("" if source.enabled else " once enabled (`starfeed source enable ID`): it is disabled"))
        if done.joined:
            print(f"now also in {', '.join(done.joined)}")
        if done.not_applied:
            print(f"kept as it was: {'; '.join(done.not_applied)}")
        if walk:
            print(walk)
        return
    print(f"added {source.source_id} {source.url}")
    print(f"root domain: {source.root_domain}" if source.root_domain else
          "root domain: none (--no-root-domain; `starfeed root-domain set ID DOMAIN` gives one)")
    if asking := described(source.request, storage.settings.proxy):
        print(f"asked with: {asking}")
    if checked is not None:
        from starfeed.inspect import first_fetch, found

        print(f"found: {found(checked.inspection)}")
        print(f"first fetch: {first_fetch(checked.inspection, args.backfill)}")
    print("due now: the next scheduler run fetches it" + (" (not checked: --no-check)" if args.no_check else ""))
    if walk:
        print(walk)


def _backfill(args) -> None:
    print(_walk(connect(args.stack), args.id))


def _walk(storage, source_id: str) -> str:
    try:
        subscribe.start_history(storage, source_id, time.time())
    except Refused as exc:
        raise CliError(str(exc)) from None
    return (f"history: {source_id}'s archive is walked from its feed, a document at a time "
            "(`starfeed source list` shows how far it got)")


HOST_PAUSED = "host-paused"  # the reason of a source its host's pause holds (fetch/job.py, schedule/tick.py)
LIST_WIDTH = 100  # `source list` fits a 100-column terminal; --wide shows every column
STATE_WIDTH = 26  # "failing: could not connect" whole; longer reasons are below the table


def _list(args) -> None:
    storage = connect(args.stack)
    if args.blocked:
        _blocked_list(storage)
        return
    sources = storage.sources.all()
    if args.json:  # every source unless --deleted: deleted_at says which were removed
        from dataclasses import asdict

        blocked = _blocked_by_source(storage)
        print(json.dumps([{**shown(asdict(s)), "blocked": blocked[s.source_id]} for s in sources
                          if s.deleted_at is not None or not args.deleted], indent=1))
        return
    sources = [s for s in sources if (s.deleted_at is not None) == args.deleted]
    now = time.time()
    # Feeds first, then the GitHub follow list and its accounts; each group as subscribed.
    sources.sort(key=lambda s: (kind_of(s).list_group, s.created_at))
    (_wide_list if args.wide else _plain_list)(storage, sources, now, args.deleted)


def _plain_list(storage, sources: list, now: float, deleted: bool = False) -> None:
    """At most LIST_WIDTH columns, in words: what each source is, whether it works (STATE says
    disabled, failing and why, or when it was removed), polling on or off, when it is next checked,
    what it holds, its root domain; then why the failing ones fail, in full."""
    import textwrap

    header = ("ID", "STATE", "POLL", "NEXT", "ENTRIES", "DROPPED", "ROOT", "TITLE")
    rows = [(s.source_id, clip(_state(s, now), STATE_WIDTH), "on" if s.polling else "off", _next(s, now),
             f"{s.entry_count:,}", f"{sum(s.last_dropped.values()):,}" if s.last_dropped else "-",
             s.root_domain or "-", _name(s)) for s in sources]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(6)]
    # ROOT and TITLE share what is left (24 columns at least), ROOT at most half: both clipped,
    # never the line; --wide has them whole.
    room = LIST_WIDTH - sum(widths) - 2 * 7
    root_width = min(max(len(r[6]) for r in [header, *rows]), max(10, room // 2))
    title_width = max(10, room - root_width)
    right = {3, 4, 5}  # numbers and times align right
    for row in [header, *rows]:
        cells = [cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))]
        print("  ".join([*cells, clip(row[6], root_width).ljust(root_width), clip(row[7], title_width)]).rstrip())
    if not rows:
        print("(no removed sources)" if deleted else "(no sources: add one with `starfeed source add URL`)")
    print()
    if deleted and rows:
        print("`starfeed source restore ID` brings one back; `starfeed source purge ID` deletes it and its entries")
    failing: dict[str, list[str]] = {}
    for s in sources:
        if s.live and s.last_error and s.status in (Status.ERROR, Status.DEAD):
            failing.setdefault(s.last_error, []).append(s.source_id)
    if failing:
        print("why they fail (`source show ID`: one source's history; `inspect URL`: what to try next):")
        for error, ids in failing.items():
            named = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
            print(f"  {named}:")
            for line in textwrap.wrap(error, LIST_WIDTH - 4, break_on_hyphens=False):
                print(f"    {line}")
    paused = _paused_hosts(storage, sources, now)
    if paused:
        print("paused hosts (every source on one waits until then):")
        for host, pause in paused.items():
            line = f"{host} until {time.strftime('%H:%M UTC', time.gmtime(pause['until']))}: {pause['reason']}"
            print(textwrap.fill(line, LIST_WIDTH, initial_indent="  ", subsequent_indent="    "))
    if any(s.last_dropped for s in sources):
        print(textwrap.fill(
            f"DROPPED: entries the last fetch left out by the date filters (older than "
            f"{storage.settings.max_article_age_days} days, or, on a first fetch, published before you "
            "subscribed); `source show ID` says which. `source add --backfill N` keeps a new "
            "source's newest N.", LIST_WIDTH))
    analysis_failing = [s for s in sources if s.live and s.deframe and s.analysis_error]
    if analysis_failing:
        print("analysis failing (the entries are retried, then dead-lettered):")
        for s in analysis_failing:
            for n, line in enumerate(textwrap.wrap(s.analysis_error, LIST_WIDTH - 4 - len(s.source_id) - 2)):
                print(f"  {s.source_id if n == 0 else ' ' * len(s.source_id)}  {line}")
    asked = [(s.source_id, words) for s in sources
             if (words := described(s.request, subscribe.global_proxy_of(s, storage.settings)))]
    if asked:
        print("asked with their own request options, or through a proxy:")
        for source_id, words in asked:
            print(textwrap.fill(f"{source_id}  {words}", LIST_WIDTH, initial_indent="  ", subsequent_indent="    "))
    walks = [(s.source_id, history_state(s.history, now)) for s in sources if s.history]
    if walks:
        print("histories (the archive walked once, RFC 5005):")
        for source_id, state in walks:
            print(f"  {source_id}  {clip(state, LIST_WIDTH - len(source_id) - 4)}")
    pushed = [(s.source_id, push_state(s, now)) for s in sources if s.push]
    if pushed:
        print("pushed by WebSub hubs (polled daily while verified):")
        for source_id, state in pushed:
            print(f"  {source_id}  {clip(state, LIST_WIDTH - len(source_id) - 4)}")
    for timeline in live_timelines(sources):
        print("GitHub timeline (received events: a followed account's star makes it due at once):")
        print(textwrap.fill(timeline_state(timeline, sources, now), LIST_WIDTH, initial_indent="  ",
                            subsequent_indent="    "))
    print(_totals(sources))
    if held := sum(_blocked_by_source(storage).values()):
        print(f"{held:,} stored entr{'y' if held == 1 else 'ies'} held back by rules (`source list --blocked` "
              "lists them)")
    print(_analyzer_line(storage, sources, now))
    print(_pace(storage.pace.load(), now))


BLOCKED_SHOWN = 200  # entries `source list --blocked` prints at most; the counts are of them all


def _blocked_by_source(storage) -> Counter[str]:
    counts: Counter[str] = Counter()
    for (_, source_id), n in storage.entry_lists.blocked_counts().items():
        counts[source_id] += n
    return counts


def _blocked_list(storage) -> None:
    """What the rules hold back (docs/design.md#rules): each source's count, then its entries with
    the rule that blocked each, newest first."""
    counts = _blocked_by_source(storage)
    entries = storage.entry_lists.blocked(BLOCKED_SHOWN)
    sources = storage.sources.get_many(set(counts)) if counts else {}
    for source_id, n in counts.most_common():
        source = sources.get(source_id)
        print(f"{source_id}  {_name(source) if source else '(purged)'}: {n:,} blocked")
        for entry in (e for e in entries if e.feed_id == source_id):
            title = entry.title or entry.canonical_link or ""
            print(f"  {entry.sort_time[:10]}  {entry.blocked_by}  {clip(title, LIST_WIDTH - 24)}")
    total = sum(counts.values())
    if not total:
        print("(no entry is blocked: `starfeed rules add block ...` holds entries back)")
        return
    print(f"{total:,} entr{'y' if total == 1 else 'ies'} blocked" + (
        f" (the first {BLOCKED_SHOWN} listed)" if total > BLOCKED_SHOWN else "")
        + "; `starfeed rules list` names the rules, `starfeed rules remove ID` brings an entry back")


def _paused_hosts(storage, sources: list, now: float) -> dict[str, dict]:
    """The pauses of the hosts whose sources a site's refusal holds (the source that got it, and
    its neighbours held by it), by host."""
    hosts = sorted({s.host for s in sources if s.live and (s.reason == HOST_PAUSED or (
        isinstance(s.failure, FailureClass) and s.failure.refusing))})
    return {host: pause for host in hosts if (pause := storage.hosts.pause_of(host, now))}


def _wide_list(storage, sources: list, now: float, deleted: bool = False) -> None:
    """Every column, as wide as it takes, and the full pace."""
    rows = [("ID", "URL", "TITLE", "STATUS", "POLLING", "ROOT DOMAIN", "INTERVAL", "TIER", "LAST FETCH",
             "NEXT CHECK", "REASON", "FAILURES", "ENTRIES", "DROPPED", "LAST ERROR")]
    for s in sources:
        status = (f"removed {ago(s.deleted_at, now)}" if s.deleted_at is not None
                  else s.status if s.enabled else "disabled")
        dropped = "; ".join(f"{n} {why}" for why, n in s.last_dropped.items()) or "-"
        rows.append((s.source_id, s.url, clip(s.title or "-", 40), status, "on" if s.polling else "off",
                     s.root_domain or "-", span(s.interval) if s.interval else "-", _tier(s),
                     ago(s.last_fetch_at, now), until(s.next_check_at, now) if s.live else "-", s.reason or "-",
                     str(s.consecutive_failures), str(s.entry_count), dropped, s.last_error or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    if len(rows) == 1:
        print("(no removed sources)" if deleted else "(no sources: add one with `starfeed source add URL`)")
    print(_pace(storage.pace.load(), now, wide=True))


def _state(source, now: float | None = None) -> str:
    """A source's state in words: ok, no change, new, disabled, failing: <why>, stopped: <why>,
    removed <when>."""
    if source.deleted_at is not None:
        return "removed" + (f" {ago(source.deleted_at, now)}" if now is not None else "")
    if not source.enabled:
        return "gone (410): disabled" if source.status == Status.GONE else "disabled"
    if source.status in (Status.ERROR, Status.DEAD):
        # An error cleared by `source sync` keeps its class's words while its host's pause holds it.
        why = _short_error(source.last_error) or failure_words(source.failure, None) or (
            "held by a host pause" if source.reason == HOST_PAUSED else "")
        return ("failing" if source.status == Status.ERROR else "stopped") + (f": {why}" if why else "")
    if not source.polling:
        return "polling off"
    if source.status == Status.NEW and source.reason == HOST_PAUSED:
        return "new: held by a host pause"
    return {"ok": "ok", "not-modified": "no change", "new": "new: not fetched yet"}.get(source.status, source.status)




def _short_error(error: str | None) -> str:
    """The first words of an error: "404 Not Found", "could not connect", "parse error"."""
    if not error:
        return ""
    head = error.split(": ", 1)[0].split("; ", 1)[0].strip()
    return f"{head} error" if head in STAGES else head


def _next(source, now: float) -> str:
    at = source.next_check_at
    if at is None or not source.live:
        return "-"
    return "now" if at <= now else "in " + span(at - now)


def _name(source) -> str:
    """What its kind calls it: the title, else the URL without its scheme."""
    return kind_of(source).label(source)


def _totals(sources: list) -> str:
    states = Counter("removed" if s.deleted_at is not None else "disabled" if not s.enabled
                     else "failing" if s.status in (Status.ERROR, Status.DEAD)
                     else "new" if s.status == Status.NEW else "ok" for s in sources)
    parts = [f"{states[k]} {k}" for k in ("ok", "new", "failing", "disabled", "removed") if states[k]]
    return (f"{len(sources)} source{'s' if len(sources) != 1 else ''}" + (f" ({', '.join(parts)})" if parts else "")
            + f"; {sum(s.entry_count for s in sources):,} entries stored")


def _analyzer_line(storage, sources: list, now: float) -> str:
    """Deframing (docs/design.md#deframing): how many sources, and today's analyzer use against the budget."""
    usage = storage.analyses.usage(now)
    deframed = sum(1 for s in sources if s.deframe)
    return (f"analyzer today: {usage['calls']:,} of {usage['daily_calls']:,} calls, {usage['tokens']:,} of "
            f"{usage['daily_tokens']:,} tokens ({storage.settings.analyzer}); {deframed} source"
            f"{'s' if deframed != 1 else ''} deframed")


def _pace(stored, now: float, wide: bool = False) -> str:
    """The scheduler's pace in a line: in short, or (wide) with its reference delay."""
    if stored is None:
        return ("pace: not computed yet (the scheduler steps it hourly)" if wide else
                "pace: not set yet (the scheduler sets it hourly; --wide has the details)")
    pace, at = stored
    if wide:
        return (f"pace: an active source waits at most {span(pace.horizon)} beyond its quiet hours; active from"
                f" {pace.active_per_day:.2f} posts a day; the entry-frequency rule's p95 delay here"
                f" {span(pace.reference)}; stepped {ago(at, now)}")
    return (f"pace: a source posting {pace.active_per_day:.2f}+ times a day waits at most {span(pace.horizon)}"
            f" beyond its quiet hours (set {ago(at, now)})")


def _show(args) -> None:
    """Everything about one source, the full last error and its recent fetches included."""
    storage = connect(args.stack)
    s = storage.sources.get(args.id)
    if s is None:
        raise CliError(f"no source with id {args.id}: see `starfeed source list`")
    now = time.time()

    def when(epoch):
        if not isinstance(epoch, (int, float)):
            return str(epoch or "-")  # the fetch history keeps RFC 3339 times
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch)) + \
            f" ({ago(epoch, now) if epoch <= now else until(epoch, now)})"

    lines = [("id", s.source_id), ("url", s.url), ("title", s.title or "-"), ("kind", s.kind),
             *([("selectors", selector_options(s.selectors))] if s.selectors else []),
             ("site", s.site_url or "-"), ("collections", ", ".join(s.collections) or "-"),
             ("state", _state(s)), ("status", f"{s.status}" + (f", HTTP {s.http_status}" if s.http_status else "")),
             ("last error", s.last_error or "-"),
             ("failure", f"{failure_words(s.failure, s.last_error) or s.failure} (class {s.failure})"
              if s.failure else "-"),
             ("failures", str(s.consecutive_failures)),
             ("subscribed", when(s.created_at)), ("last fetch", when(s.last_fetch_at)),
             ("last success", when(s.last_success_at)),
             ("next check", when(s.next_check_at) if s.live else "- (disabled or removed)"),
             ("interval", (span(s.interval) if s.interval else "-") + (f" ({s.reason})" if s.reason else "")),
             ("tier", _tier(s)), ("policy", s.policy), ("polling", "on" if s.polling else "off"),
             ("enabled", "yes" if s.enabled else "no"),
             ("removed", when(s.deleted_at) if s.deleted_at is not None else "-"),
             ("root domain", s.root_domain or "-"), ("entries", f"{s.entry_count:,} stored"),
             ("asked with", described(s.request, subscribe.global_proxy_of(s, storage.settings))
                            or "starfeed's own headers, no proxy"),
             ("backfill", f"the first fetch kept the newest {s.backfill}" if s.backfill else "-"),
             ("enforce domain", "yes" if s.enforce_feed_domain else "no"),
             ("deframe", (f"on, prompt {prompt_for(s.prompt).version}" if s.deframe else "off")),
             ("analysis error", s.analysis_error or "-"), ("push", push_state(s, now) or "-"),
             ("history", history_state(s.history, now) or "-")]
    for why, n in s.last_dropped.items():
        lines.append(("dropped", f"{n} {why} (last fetch)"))
    for fetch in s.fetch_history[:5]:
        lines.append(("fetched", f"{when(fetch.get('at'))}: {fetch.get('status') or 'no response'}, "
                                 f"{outcome_of(fetch)}"))
    for change in s.url_changes:
        lines.append(("moved", f"{change.get('from')} -> {change.get('to')} ({when(change.get('at'))})"))
    for key, value in lines:
        print(f"{key + ':':16}{value}")


def shown(fields: dict) -> dict:
    """A source's fields as the CLI prints them, with its last failure's class and words: its
    WebSub secret and callback token never."""
    fields["failure_class"] = fields.get("failure")
    fields["failure_words"] = failure_words(fields.get("failure"), fields.get("last_error"))
    fields.pop("push_secret", None)
    request = fields.get("request")
    fields["request"] = shown_options(RequestOptions(**request)) if isinstance(request, dict) else None
    if fields.get("push"):
        fields["push"] = {k: v for k, v in fields["push"].items() if k != "token"}
    return fields


def history_state(history: dict | None, now: float) -> str | None:
    """An archive walk in words: queued, walking, done or stopped, how far, and why it ended."""
    if not history:
        return None
    text = (f"{history.get('state')} {ago(history.get('at'), now)}: {history.get('documents', 0)} archive "
            f"documents, {history.get('entries', 0):,} entries imported")
    return text + (f"; {history['reason']}" if history.get("reason") else "")


def push_state(source, now: float) -> str | None:
    """A WebSub subscription in words: verified until when (and the last push, from the fetch
    history), pending since when, denied or failed and why, being unsubscribed."""
    push = source.push
    if not push:
        return None
    hub = urlsplit(str(push.get("hub"))).netloc
    state = push.get("state")
    if state == "verified":
        text = f"verified until {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(push.get('expires_at') or 0))} ({hub})"
        pushed = next((f.get("at") for f in source.fetch_history if str(f.get("outcome", "")).startswith("push")), None)
        if pushed:
            text += f", last push at {pushed}"
        if push.get("renewing"):
            text += ", renewal asked"
    elif state == "pending":
        text = f"pending since {ago(push.get('requested_at'), now)} ({hub})"
    else:
        text = f"{state} ({hub})"
    return text + (f": {push['reason']}" if push.get("reason") else "")


def timeline_state(timeline, sources: list, now: float) -> str:
    """When the timeline was last read, how often, how many stars it hinted, how many accounts it
    announces (polled daily), and its last gap."""
    state = timeline.timeline
    if state is None or not state.read_at:
        return f"{timeline.source_id}  not read yet"
    text = (f"{timeline.source_id}  read {ago(state.read_at, now)} (every {span(timeline.interval or 60)}); "
            f"{state.hinted:,} star(s) hinted"
            + (f", the last {ago(state.last_hinted_at, now)}" if state.last_hinted_at else "")
            + f"; {announced(sources)} account(s) announced by it, checked daily")
    if state.overflowed_at:
        text += f"; last gap (over 300 events between reads) {ago(state.overflowed_at, now)}"
    return text


def _tier(source) -> str:
    """Its kind's activity tier (a GitHub account's: low until three stars)."""
    return kind_of(source).tier(source)


def _set_source(args) -> None:
    changes = {role: getattr(args, role) for role, _ in SELECTOR_OPTIONS}
    asked = asked_of(args)
    if all(value is None for value in changes.values()) and not asked.given:
        raise CliError("give the selectors or request options to change: " + ", ".join(
            [f"--{role}" for role, _ in SELECTOR_OPTIONS] + ["--header", "--user-agent", "--cookie", "--proxy",
                                                           "--no-proxy"]))
    storage = connect(args.stack)
    if asked.given:
        try:
            source, checked = subscribe.set_request(storage, args.id, asked, time.time(), no_check=args.no_check)
        except Refused as exc:
            raise CliError(str(exc)) from None
        print(f"{source.source_id}: asked with "
              f"{described(source.request, storage.settings.proxy) or 'starfeed own headers, no proxy'}")
        if checked is not None:
            from starfeed.inspect import found

            print(f"found: {found(checked.inspection)}")
        if all(value is None for value in changes.values()):
            print("due now: the next scheduler run fetches it with them")
            return
    try:
        source, checked = subscribe.set_selectors(storage, args.id, changes, time.time(), no_check=args.no_check)
    except Refused as exc:
        raise CliError(str(exc)) from None
    print(f"{source.source_id}: read by {selector_options(source.selectors)}")
    if checked is not None:
        from starfeed.inspect import found

        print(f"found: {found(checked.inspection)}")
    print("due now: the next scheduler run reads the page whole with them")


def selector_options(selectors) -> str:
    """The selectors as the options that give them, ready to paste into a command."""
    pairs = [(role, getattr(selectors, role)) for role, _ in SELECTOR_OPTIONS]
    return shlex.join(part for role, value in pairs if value for part in (f"--{role}", value))


def _sync(args) -> None:
    storage, now = connect(args.stack), time.time()
    try:
        subscribe.sync(storage, args.id, now)
    except Refused as exc:
        raise CliError(str(exc)) from None
    source = storage.sources.get(args.id)
    pause = storage.hosts.pause_of(source.host, now) if source is not None else None
    if pause is None:
        print(f"{args.id} is due now: the next scheduler run fetches it")
        return
    print(paused_words(args.id, source.host, pause, now))


def paused_words(source_id: str, host: str, pause: dict, now: float) -> str:
    """Why a source made due waits all the same: its host's pause, its rule in words, and what next."""
    from starfeed.inspect import NEXT_STEPS, failure_named

    if pause["stopped"]:
        held = f"{host} is paused until someone acts, because {pause['reason']}"
    else:
        at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(pause["until"]))
        held = f"{host} is paused until {at} (in {span(pause['until'] - now)}), because {pause['reason']}"
    failure = failure_named(pause["reason"] or "")
    lines = [f"{source_id} is not asked now: its host {held}.",
             f"Every source on the host waits for the pause's end, so as not to hammer the site; {source_id} is "
             "fetched then."]
    if failure is not None and (step := NEXT_STEPS.get(failure)):
        lines.append(f"next: {step} (`starfeed source set {source_id}` gives a source options; `starfeed inspect "
                     "URL` with them tries them first)")
    return "\n".join(lines)


def _set(args) -> None:
    value = getattr(args, "value", None)
    field, value, said = {
        "enable": ("enabled", True, "enabled (its schedule is as it was)"),
        "disable": ("enabled", False, "disabled: never fetched, its feed answers 403 now, and its "
                                      "entries leave the other feeds at the next render"),
        "polling": ("polling", value == "on", f"polling {value}"),
        "policy": ("policy", value, f"failure policy {value}"),
        "deframe": ("deframe", value == "on", f"deframing {value}" + (
            ": each new entry is analyzed, and its feeds show the results" if value == "on"
            else ": new entries are not analyzed, and its feeds show the items as published")),
    }[args.verb]
    try:
        queued = subscribe.set_field(connect(args.stack), args.id, field, value)
    except Refused as exc:
        raise CliError(str(exc)) from None
    print(f"{args.id}: {said}" + (f"; {queued} stored entries without a result queued for analysis" if queued else ""))


def _prompt(args) -> None:
    text = None
    if not args.clear:
        try:
            text = Path(args.file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"{args.file}: cannot read it as UTF-8 text ({exc})") from None
    try:
        version = subscribe.set_prompt(connect(args.stack), args.id, text)
    except Refused as exc:
        raise CliError(str(exc)) from None
    print(f"{args.id}: " + ("the default prompt" if args.clear else f"its own prompt from {args.file}")
          + f" (version {version}) for the entries analyzed from now on")


def _remove(args) -> None:
    try:
        subscribe.remove(connect(args.stack), args.id, time.time())
    except Refused as exc:
        raise CliError(str(exc)) from None
    print(f"removed {args.id}: never fetched again, its feed answers 404 now, and its entries leave the "
          "other feeds at the next render (they stay stored until they expire with their TTL)")
    print(f"restore it with `starfeed source restore {args.id}`; delete it and its entries now with "
          f"`starfeed source purge {args.id}`")


def _restore(args) -> None:
    try:
        source = subscribe.restore(connect(args.stack), args.id, time.time())
    except Refused as exc:
        raise CliError(str(exc)) from None
    print(f"restored {args.id}: due now, the next scheduler run fetches it and its feed is served again"
          + ("" if source.enabled else " once enabled (`starfeed source enable ID`): it is disabled"))


def _purge(args) -> None:
    try:
        purged = subscribe.purge(connect(args.stack), args.id)
    except Refused as exc:
        raise CliError(str(exc)) from None
    print(f"purged {args.id}: the source and its {purged:,} stored entr{'y' if purged == 1 else 'ies'} "
          "deleted, and its entries leave its collections' feeds at the next render")
