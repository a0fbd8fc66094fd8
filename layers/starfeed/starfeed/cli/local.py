"""starfeed local run | reset: the embedded stack `make run` starts."""

from __future__ import annotations


def add_commands(commands) -> None:
    local = commands.add_parser("local", help="the local stack").add_subparsers(dest="verb", required=True)
    local.add_parser("run", help="run starfeed on an embedded AWS (what `make run` does)") \
        .set_defaults(action=_run)
    local.add_parser("reset", help="start clean next time (the old state is moved aside)") \
        .set_defaults(action=_reset)


def _run(args) -> int:
    from starfeed.local.run import run

    return run()


def _reset(args) -> None:
    from starfeed.local.snapshot import SNAPSHOT_FILE, move_aside
    from starfeed.local.state import state_dir

    path = state_dir() / SNAPSHOT_FILE
    if not path.exists():
        print(f"no saved state in {path.parent}: the next start is empty anyway")
        return
    print(f"moved the saved state to {move_aside(path, 'reset')}; the next start is empty")
