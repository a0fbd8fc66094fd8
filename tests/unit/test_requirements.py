"""Every third-party module the package imports is pinned: the layer's runtime ones in
layers/starfeed/requirements.txt, the development-only ones (local stack, benches) in
pyproject.toml's dev extra. An unpinned import works on the machine that has it and breaks
the layer that does not. And `pip install .` gives a working `starfeed` command: what the
command line imports comes with the package's own dependencies, not with the dev extra."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement

from test_layout import GRAPH

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "layers" / "starfeed" / "starfeed"
DEV_ONLY = ("local", "bench")  # not shipped in the layer (layers/starfeed/Makefile)
RUNTIME_PROVIDED = {"boto3", "botocore"}  # the Lambda runtime's own, as requirements.txt says


def _distribution_names(lines) -> dict[str, str]:
    """name -> the whole requirement, for every requirement line."""
    found = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line:
            name = re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0]
            found[_normal(name)] = line
    return found


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _third_party_imports(path: Path) -> set[str]:
    """Top-level modules imported, except those a `try: ... except ImportError` makes optional."""
    tree = ast.parse(path.read_text())
    optional = {id(node) for guard in ast.walk(tree) if isinstance(guard, ast.Try)
                and any(_catches_import_error(handler) for handler in guard.handlers)
                for statement in guard.body for node in ast.walk(statement)}
    tops = set()
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            tops.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            tops.add(node.module.split(".")[0])
    return {top for top in tops if top != "starfeed" and top not in sys.stdlib_module_names}


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(name, ast.Name) and name.id in ("ImportError", "ModuleNotFoundError") for name in names)


RUNTIME = _distribution_names((ROOT / "layers" / "starfeed" / "requirements.txt").read_text().splitlines())
PROVIDED = _distribution_names((ROOT / "layers" / "starfeed" / "provided-by-lambda.txt").read_text().splitlines())
DEV = _distribution_names(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                          ["optional-dependencies"]["dev"])
DISTRIBUTIONS = packages_distributions()


def _unpinned() -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        shipped = path.relative_to(PACKAGE).parts[0] not in DEV_ONLY
        for module in sorted(_third_party_imports(path)):
            names = {_normal(d) for d in DISTRIBUTIONS.get(module, [module])}
            if module in RUNTIME_PROVIDED:  # boto3, which brings botocore: test_boto3_is_declared_but_not_packaged
                continue
            runtime = [RUNTIME[n] for n in names if n in RUNTIME]
            pinned = runtime if shipped else runtime + [DEV[n] for n in names if n in DEV]
            if not pinned:
                where = "requirements.txt" if shipped else "requirements.txt or the dev extra"
                problems.append(f"{path.relative_to(ROOT)}: {module} is not in {where}")
            elif shipped and not any("==" in line for line in pinned):
                problems.append(f"{path.relative_to(ROOT)}: {module} is not pinned with == ({pinned})")
    return problems


def test_every_import_is_pinned():
    assert _unpinned() == []


def test_every_runtime_requirement_is_pinned_exactly():
    assert [line for line in RUNTIME.values() if "==" not in line] == []


def test_boto3_is_declared_but_not_packaged():
    """Lambda provides boto3 to the layer, which must not carry it; everywhere else the package
    installs it."""
    assert "boto3" in PROVIDED and "boto3" not in RUNTIME and "boto3" not in DEV


# `starfeed local run | reset` drive the embedded stack (moto, the YAML template): development only.
DEV_COMMANDS = {"starfeed.cli.local"}


def _reached_by_the_command_line() -> set[str]:
    """The package's modules `starfeed` may import, a command's lazy imports included, and the
    packages around each (importing a module runs its package's __init__ first)."""
    reached, todo = set(), ["starfeed.cli"]
    while todo:
        module = todo.pop()
        if module in reached or module in DEV_COMMANDS:
            continue
        reached.add(module)
        parents = {module.rsplit(".", depth)[0] for depth in range(1, module.count(".") + 1)}
        todo.extend(name for name in GRAPH[module] | parents if name in GRAPH)
    return reached


def _installed_with(requirements: list[str]) -> set[str]:
    """The distributions `pip install` brings for these requirements, by normal name."""
    found, todo = set(), [Requirement(line) for line in requirements]
    while todo:
        requirement = todo.pop()
        name = _normal(requirement.name)
        if name in found:
            continue
        found.add(name)
        try:
            needs = [Requirement(line) for line in requires(requirement.name) or []]
        except PackageNotFoundError:
            continue  # not installed here: its own needs cannot be read, and are not imported
        todo.extend(need for need in needs if need.marker is None
                    or any(need.marker.evaluate({"extra": extra}) for extra in requirement.extras | {""}))
    return found


def _undeclared(modules: set[str]) -> list[str]:
    """What these modules import that the package's dependencies do not bring."""
    installed = _installed_with([*RUNTIME.values(), *PROVIDED.values()])
    problems = []
    for module in sorted(modules):
        path = PACKAGE.parent / Path(*module.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for top in sorted(_third_party_imports(path)):
            if not {_normal(d) for d in DISTRIBUTIONS.get(top, [top])} & installed:
                problems.append(f"{module} imports {top}, which neither requirements.txt nor "
                                "provided-by-lambda.txt brings")
    return problems


def test_the_command_line_runs_on_the_declared_dependencies():
    reached = _reached_by_the_command_line()
    assert {"starfeed.cli.inspect", "starfeed.deployment", "starfeed.local.state"} <= reached  # lazy ones too
    assert _undeclared(reached) == []


def test_a_development_only_import_is_caught():
    assert _undeclared({"starfeed.local.template"}) == [
        "starfeed.local.template imports yaml, which neither requirements.txt nor provided-by-lambda.txt brings"]
