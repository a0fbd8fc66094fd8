"""starfeed proxy show | set | clear: the login of STARFEED_PROXY, the egress proxy of every source
without one of its own, kept in the token store."""

from __future__ import annotations

from starfeed import subscribe
from starfeed.cli.common import CliError, connect


def add_commands(commands) -> None:
    proxy = commands.add_parser("proxy", help="the login of STARFEED_PROXY, the proxy of every source without "
                                "one of its own").add_subparsers(dest="verb", required=True)
    proxy.add_parser("show", help="STARFEED_PROXY, and whether a login for it is kept").set_defaults(action=_show)
    setting = proxy.add_parser("set", help="keep STARFEED_PROXY's login in the token store",
                               description="Keep the login of STARFEED_PROXY (the template's parameter Proxy, "
                               "which holds no credentials) in the token store, where every fetch through "
                               "the proxy reads it, within 5 minutes. The URL is STARFEED_PROXY's with "
                               "USER:PASSWORD@ before its host; it is never shown or logged.")
    setting.add_argument("url", metavar="URL", help="scheme://USER:PASSWORD@HOST:PORT")
    setting.set_defaults(action=_set)
    proxy.add_parser("clear", help="remove STARFEED_PROXY's login from the token store").set_defaults(action=_clear)


def _show(args) -> None:
    from starfeed.fetch.options import via

    storage = connect(args.stack)
    shown = via(None, storage.settings.proxy)
    if shown is None:
        print("no STARFEED_PROXY: every source without a proxy of its own is fetched directly")
        return
    try:
        login = storage.secrets.proxy_login() is not None
    except LookupError as exc:
        raise CliError(f"{shown}; its login: {exc}") from None
    print(f"{shown}, " + ("with a login kept in the token store" if login else "without a login"))


def _set(args) -> None:
    storage = connect(args.stack)
    try:
        where = subscribe.set_proxy_login(storage, args.url)
    except subscribe.Refused as exc:
        raise CliError(str(exc)) from None
    print(f"STARFEED_PROXY's login kept in {where}: fetches through the proxy use it within 5 minutes")


def _clear(args) -> None:
    storage = connect(args.stack)
    removed = storage.secrets.delete_proxy_login()
    print("STARFEED_PROXY's login removed from the token store" if removed else "no login for STARFEED_PROXY was kept")
