"""starfeed github connect | sync | status: the GitHub stars of everyone you follow (docs/design.md#github)."""

from __future__ import annotations

import sys
import time

from starfeed.cli.common import CliError, ago, connect, span, until
from starfeed.kinds import github as following
from starfeed.parse.github import Answer
from starfeed.schedule.github import TIERS


def add_commands(commands) -> None:
    github = commands.add_parser("github", help="the GitHub stars of everyone you follow") \
        .add_subparsers(dest="verb", required=True)
    github_connect = github.add_parser("connect", help="check a token with GitHub and store it where "
                                       "the deployment reads it; resumes stopped polling")
    github_connect.add_argument("--token-stdin", action="store_true",
                                help="read the token from standard input instead of prompting")
    github_connect.set_defaults(action=_connect)
    github.add_parser("sync", help="sync the follow list now").set_defaults(action=_sync)
    github.add_parser("status", help="rate limit, any pause, users by tier, the last error") \
        .set_defaults(action=_status)


def _connect(args) -> None:
    """Check the token with GitHub, store it where the deployment reads it, and resume polling."""
    import getpass

    from starfeed.fetch.github import GitHub, whoami

    token = sys.stdin.readline().strip() if args.token_stdin else getpass.getpass("GitHub token: ").strip()
    if not token:
        raise CliError("no token given")
    storage = connect(args.stack)
    page, login = whoami(GitHub(storage.settings, lambda force: token))
    if page.verdict.answer != Answer.OK:
        raise CliError(f"{storage.settings.github_api_url} did not accept this token: "
                       f"{page.verdict.reason}; nothing was stored")
    where = storage.secrets.put_github_token(token)
    print(f"token for {login or 'an account GitHub did not name'} stored in {where}")
    _resume(storage)


def _sync(args) -> None:
    _resume(connect(args.stack))


def _resume(storage) -> None:
    resumed = following.resume(storage, time.time())
    if resumed.lifted_stop:
        print("GitHub polling resumes (it had stopped: the token was rejected)")
    if resumed.added:
        print(f"added {resumed.added.source_id} {resumed.added.url}")
    print("the follow list is due now: the next scheduler run syncs it")


def _status(args) -> None:
    from starfeed.render.html import github_notice

    storage = connect(args.stack)
    settings, now = storage.settings, time.time()
    state = following.state(storage, now)
    print(f"API: {settings.github_api_url}")
    print("rate limit: " + rate_text(state.rate_limit, now))
    print("pause: " + (github_notice(state.pause) or "none"))
    if state.following is None:
        print("follow list: not connected: run `starfeed github connect`")
    else:
        print(f"follow list: {state.following.title}, synced {ago(state.following.last_success_at, now)}, "
              f"next {until(state.following.next_check_at, now)}")
    if state.timeline is not None:
        from starfeed.cli.sources import timeline_state

        print("timeline: " + timeline_state(state.timeline, state.users, now).split("  ", 1)[1])
    tiers = state.tiers
    print(f"users: {sum(tiers.values())} followed ({', '.join(f'{tiers[t]} {t}' for t in TIERS)}), "
          f"{state.unfollowed} no longer followed, {state.stars} stars")
    failed = state.last_failure
    print("last error: " + (f"{failed.last_error} ({failed.title}, {ago(failed.last_fetch_at, now)})"
                            if failed else "none"))


def rate_text(rate: dict | None, now: float) -> str:
    """GitHub's rate limit as it last said it."""
    if not rate:
        return "not seen yet"
    return (f"{rate['remaining']:,} of {rate['limit']:,} left, resets "
            f"{time.strftime('%H:%M:%S UTC', time.gmtime(rate['reset']))} (seen {span(now - rate['at'])} ago)")
