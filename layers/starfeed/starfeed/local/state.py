"""Where the local stack keeps its state. Standard library only: the command line finds a running
stack's file here with the package's runtime dependencies, without the stack's own machinery
(moto, the YAML template reader), which only development installs."""

from __future__ import annotations

import os
from pathlib import Path

STACK_FILE = "stack.json"


def project_root() -> Path:
    """The checkout holding template.yaml: from STARFEED_HOME, the working directory, or here."""
    candidates = [Path(os.environ["STARFEED_HOME"])] if os.environ.get("STARFEED_HOME") else []
    candidates += [Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents]
    for candidate in candidates:
        if (candidate / "template.yaml").is_file() and (candidate / "functions").is_dir():
            return candidate
    raise FileNotFoundError("template.yaml not found: run from a starfeed checkout or set STARFEED_HOME")


def state_dir() -> Path:
    return Path(os.environ.get("STARFEED_STATE_DIR") or project_root() / ".starfeed" / "local")
