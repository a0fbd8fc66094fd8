"""Every third-party module the package imports is pinned: the layer's runtime ones in
layers/starfeed/requirements.txt, the development-only ones (local stack, benches) in
pyproject.toml's dev extra. An unpinned import works on the machine that has it and breaks
the layer that does not."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

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
DEV = _distribution_names(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                          ["optional-dependencies"]["dev"])
DISTRIBUTIONS = packages_distributions()


def _unpinned() -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        shipped = path.relative_to(PACKAGE).parts[0] not in DEV_ONLY
        for module in sorted(_third_party_imports(path)):
            names = {_normal(d) for d in DISTRIBUTIONS.get(module, [module])}
            if module in RUNTIME_PROVIDED:  # boto3 brings botocore
                if not shipped and "boto3" not in DEV:
                    problems.append(f"{path.relative_to(ROOT)}: {module} needs boto3 in the dev extra")
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
