"""The starfeed command line: manage sources of the local stack or of a deployed one.

One module per command group (sources, rules, root_domain, opml, proxy, github, inspect, tap, api, local); each parses
and prints, and calls the package (starfeed.subscribe, starfeed.following, starfeed.deployment,
starfeed.rest_client) to act."""

from __future__ import annotations

import argparse
import os
import sys

from starfeed.cli import api, github, inspect, local, opml, proxy, root_domain, rules, sources, status, tap
from starfeed.cli.common import CliError, describe


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
    except Exception as exc:  # one line a person can act on, not a traceback
        if os.environ.get("STARFEED_DEBUG"):
            raise
        print(f"starfeed: {describe(exc)}", file=sys.stderr)
        return 1


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        """One line, with where to read more, instead of the usage block."""
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="starfeed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", metavar="NAME",
                        help="a deployed CloudFormation stack (default: the local stack of `make run`)")
    commands = parser.add_subparsers(dest="command", required=True)
    for group in (sources, rules, root_domain, inspect, opml, proxy, github, tap, api, local, status):
        group.add_commands(commands)
    return parser
