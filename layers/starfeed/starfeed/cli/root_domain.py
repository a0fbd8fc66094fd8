"""starfeed root-domain list | set | clear: the site key (docs/design.md#root-domain), by hand."""

from __future__ import annotations

from starfeed import subscribe
from starfeed.cli.common import CliError, connect
from starfeed.subscribe import Refused


def add_commands(commands) -> None:
    group = commands.add_parser("root-domain", help="the sites sources are grouped by (for /api/site)",
                                description="A source's root domain groups it with the other feeds "
                                "of its site (/api/site?root=DOMAIN). `source add` takes it from the "
                                "URL (example.com for https://blog.example.com/feed) unless "
                                "--no-root-domain.").add_subparsers(dest="verb", required=True)
    listing = group.add_parser("list", help="every root domain with its number of sources (removed ones "
                               "left out)")
    listing.set_defaults(action=_list)
    put = group.add_parser("set", help="set one source's root domain")
    put.add_argument("source", metavar="ID|URL", help="the source's id, or its URL")
    put.add_argument("domain", metavar="DOMAIN", help="a host name such as example.com")
    put.set_defaults(action=_set)
    clear = group.add_parser("clear", help="leave one source without a root domain")
    clear.add_argument("source", metavar="ID|URL", help="the source's id, or its URL")
    clear.set_defaults(action=_clear)


def _list(args) -> None:
    domains = subscribe.root_domains(connect(args.stack))
    if not domains:
        print("(no sources: add one with `starfeed source add URL`)")
        return
    width = max(len("ROOT DOMAIN"), *(len(d or "(none)") for d, _ in domains))
    print(f"{'ROOT DOMAIN':<{width}}  SOURCES")
    for domain, n in domains:
        print(f"{domain or '(none)':<{width}}  {n:>7,}")


def _set(args) -> None:
    try:
        source, domain = subscribe.set_root_domain(connect(args.stack), args.source, args.domain)
    except Refused as exc:
        raise CliError(str(exc)) from None
    print(f"{source.source_id}: root domain {domain}" + (f" (was {source.root_domain})" if source.root_domain
                                                          and source.root_domain != domain else ""))


def _clear(args) -> None:
    try:
        source = subscribe.clear_root_domain(connect(args.stack), args.source)
    except Refused as exc:
        raise CliError(str(exc)) from None
    print(f"{source.source_id}: no root domain" + (f" (was {source.root_domain})" if source.root_domain else
                                                   " (it had none)"))
