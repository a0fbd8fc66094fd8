"""The house rules of README's "How the code is laid out" (RULES, which README lists word for
word), checked on the package's imports, so that a change which breaks one fails here rather than
in a review. The last two rules are checked on the registries they protect: test_kinds.py and
test_formats.py.

Every import counts, a function's lazy one included: a loop hidden in a function is still a loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES = (
    "no import loops, a function's lazy import included",
    "`store` imports only `model`, `settings` and itself: storage sits below everything",
    "`store` decides nothing: it reads neither the entry decision's settings (`max_rewrites`, `sighting_refresh`) "
    "nor compares content hashes; it writes what `parse/dedupe.py` decided",
    "the pure core (`model`, `settings`, `formats`, `cursors`, `urlpolicy`, `stats`, `parse`, `schedule` but "
    "`tick` and `dispatch`, `render` but `job` and `pages`, `enrich` but `job` and `bedrock`, "
    "`serve/negotiate.py`, `fetch/headers.py`, `fetch/options.py`, `websub/subscription.py`, `rules/grammar.py`, "
    "`rules/judge.py`) imports neither "
    "`store` nor boto3, botocore, PynamoDB or requests: it is tested without I/O",
    "only the jobs (`fetch/job.py`, `document.py`, `github_job.py`, `record.py`, `robots.py`, `history.py`, "
    "`entries.py`, `render/job.py`, `schedule/tick.py`, `dispatch.py`, `enrich/job.py`, `rules/sweep.py` and the "
    "enricher's model client "
    "`enrich/bedrock.py`, and the source kinds in `kinds/`), what a job and the api both read "
    "(`render/pages.py`), the api's routes, the CLI and what it shares (`subscribe`, `deployment`, "
    "`rest_client`, `sources`, `taps`, `rules/manage.py`) reach storage",
    "`serve` imports no job: what it builds per request it reads through `render/pages.py`",
    "nothing below `serve` imports it",
    "outside `kinds/`, no code compares a source's kind: it asks `kind_of(source)`",
    "outside `formats.py`, no code spells a feed format's media type or extension",
)
PACKAGE = ROOT / "layers" / "starfeed" / "starfeed"
AWS = {"boto3", "botocore", "pynamodb"}

# The pure core: decisions, parsing, normalization, rendering formats and negotiation. No I/O.
PURE = ("starfeed.model", "starfeed.settings", "starfeed.urlpolicy", "starfeed.formats", "starfeed.cursors",
        "starfeed.stats", "starfeed.parse", "starfeed.schedule", "starfeed.render", "starfeed.serve.negotiate",
        "starfeed.fetch.headers", "starfeed.fetch.options", "starfeed.enrich", "starfeed.websub.subscription",
        "starfeed.rules.grammar", "starfeed.rules.judge")
# Where the pure core meets storage: the jobs, the api's routes, and what the CLI and the api share.
JOBS = ("starfeed.fetch.job", "starfeed.fetch.document", "starfeed.fetch.github_job", "starfeed.fetch.record",
        "starfeed.fetch.robots", "starfeed.fetch.history", "starfeed.fetch.entries",
        "starfeed.render.job", "starfeed.schedule.tick", "starfeed.schedule.dispatch", "starfeed.enrich.job",
        "starfeed.rules.sweep",
        # The source kinds: each fetches, and what it stores is its own (starfeed/kinds).
        "starfeed.kinds",
        # The analyzer that calls a model: the enrich job's edge to Bedrock.
        "starfeed.enrich.bedrock")
# What a job and the api both read from storage, so that the api imports no job.
SHARED_READS = ("starfeed.render.pages",)
# What only a decision reads: the settings that steer the entry decision, and an entry's content
# hash compared (unchanged, changed, changed back). Storage writes what parse/dedupe.py decided.
DECISION_SETTINGS = {"max_rewrites", "sighting_refresh"}
STORAGE_USERS = JOBS + SHARED_READS + ("starfeed.serve", "starfeed.websub.callback", "starfeed.sources",
                                       "starfeed.subscribe", "starfeed.taps", "starfeed.deployment",
                                       "starfeed.rest_client", "starfeed.rules.manage", "starfeed.cli",
                                       "starfeed.local", "starfeed.bench")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module this file imports, by absolute name (a `from package import name` counts as
    the submodule when there is one)."""
    names, tree = set(), ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}: relative import"
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names
                         if _exists(f"{node.module}.{alias.name}"))
    return names


def _exists(module: str) -> bool:
    relative = Path(*module.split("."))
    path = PACKAGE.parent / relative
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


GRAPH = {_module_name(path): _imports(path) for path in sorted(PACKAGE.rglob("*.py"))}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def _pure(module: str) -> bool:
    return _within(module, PURE) and not _within(module, JOBS + SHARED_READS)


def _ours(graph: dict[str, set[str]], module: str) -> set[str]:
    return {name for name in graph[module] if name in graph and name != module}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop among the package's modules, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for name in sorted(_ours(graph, module)):
            if state.get(name) == 1:
                return path[path.index(name):] + [name]
            if name not in state and (found := visit(name)):
                return found
        state[module] = 2
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_the_package_has_no_import_loop():
    assert _cycle(GRAPH) is None, " -> ".join(_cycle(GRAPH))


def test_the_loop_finder_finds_a_loop():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if _within(m, ("starfeed.store",))))
def test_storage_imports_only_the_model_and_settings(module):
    outside = {name for name in _ours(GRAPH, module)
               if not _within(name, ("starfeed.store", "starfeed.model", "starfeed.settings"))}
    assert not outside, f"{module} imports {sorted(outside)}: storage sits below everything but the model"


def _decisions(source: str) -> list[str]:
    """Where this code decides what the entry decision decides: it reads a setting only that
    decision uses, or compares a content hash."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in DECISION_SETTINGS:
            found.append(f"line {node.lineno}: reads {node.attr}")
        elif isinstance(node, ast.Compare) and any(
                isinstance(inner, ast.Attribute) and inner.attr == "content_hash"
                for operand in (node.left, *node.comparators) for inner in ast.walk(operand)):
            found.append(f"line {node.lineno}: compares content_hash")
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("store/*.py")), ids=lambda path: path.name)
def test_storage_decides_nothing(path):
    found = _decisions(path.read_text())
    assert not found, f"{path.name}: {found}: decisions belong in the pure core (parse/dedupe.py)"


def test_the_decision_finder_finds_a_decision():
    assert _decisions("new = old.content_hash != entry.content_hash") == ["line 1: compares content_hash"]
    assert _decisions("due = value[0] == entry.content_hash[:16]") == ["line 1: compares content_hash"]
    assert _decisions("cap = self.settings.max_rewrites") == ["line 1: reads max_rewrites"]
    assert _decisions("record = Entry(content_hash=entry.content_hash)") == []


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if _pure(m)))
def test_the_pure_core_does_no_io(module):
    aws = {name for name in GRAPH[module] if name.split(".")[0] in AWS | {"requests"}}
    impure = {name for name in _ours(GRAPH, module) if not _pure(name) and name != "starfeed"}
    assert not aws and not impure, f"{module} imports {sorted(aws | impure)}: the pure core does no I/O"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_only_jobs_and_edges_reach_storage(module):
    reaches = {name for name in GRAPH[module] if _within(name, ("starfeed.store",))
               or name.split(".")[0] in AWS}
    if reaches and not _within(module, ("starfeed.store",)):
        assert _within(module, STORAGE_USERS), f"{module} imports {sorted(reaches)}"


def test_serve_is_the_top_of_the_pipeline():
    below = {m: sorted(n for n in _ours(GRAPH, m) if _within(n, ("starfeed.serve",)))
             for m in GRAPH if not _within(m, ("starfeed.serve", "starfeed.cli", "starfeed.local", "starfeed.bench"))}
    assert not {m: n for m, n in below.items() if n}, "only the edges import serve/"


def test_the_api_imports_no_job():
    """What the api builds per request it reads through the modules it shares with the jobs: a
    job's own module, and whatever it imports, stays out of the api function."""
    jobs = {m: sorted(n for n in _ours(GRAPH, m) if _within(n, JOBS)) for m in GRAPH if _within(m, ("starfeed.serve",))}
    assert not {m: n for m, n in jobs.items() if n}, f"the api imports a job: {jobs}"


def test_the_readme_lists_these_rules():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("The rules, which `tests/unit/test_layout.py` checks"):]
    section = section[section.index("\n- "):section.index("\n\n", section.index("\n- "))]
    listed = [" ".join(bullet.split()).rstrip(";.") for bullet in section.split("\n- ")[1:]]
    assert listed == list(RULES)


def test_no_two_test_modules_share_a_name():
    """pytest imports tests/unit and tests/integration by their file names alone: a second module
    of one name is an import error that stops the whole run."""
    names = [path.name for path in (Path(__file__).resolve().parent.parent).rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []
