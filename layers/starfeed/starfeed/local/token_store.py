"""The local token store across restarts: `make run`'s embedded SSM (or Secrets Manager) keeps the
sources' secret request options and STARFEED_PROXY's login in memory; they are saved beside the
state file, in a file of their own readable by its owner alone (0600), and put back at the next
start. Apart from the state file, so that state.json.gz holds no secret of a source's and can be
shared to report a problem."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

from starfeed.local.template import ACCOUNT, REGION
from starfeed.store import Storage

log = logging.getLogger(__name__)

TOKEN_STORE_FILE = "token-store.json"
FORMAT = "starfeed-local-token-store"
VERSION = 1


class TokenStoreFile:
    def __init__(self, storage: Storage, path: Path):
        self.storage, self.path = storage, path
        self._saved: dict[str, str] | None = None

    def restore(self) -> int:
        """Put back the entries a restored source still names, and the proxy's login; returns how
        many. An unreadable file is left where it is: each source whose secrets it held says so."""
        if not self.path.exists():
            return 0
        try:
            saved = json.loads(self.path.read_text())
            entries = saved["entries"] if saved.get("format") == FORMAT and saved.get("version") == VERSION else None
            if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
                raise ValueError("not a starfeed token store file of this version")
        except (OSError, ValueError, KeyError, AttributeError) as exc:
            log.warning("the local token store %s could not be read (%s): sources with secret request options "
                        "fail until `starfeed source set ID ...` gives them again", self.path, type(exc).__name__)
            return 0
        secrets = self.storage.secrets
        named = {s.request.secret for s in self.storage.sources.all() if s.request is not None and s.request.secret}
        kept = {name: text for name, text in entries.items() if name in named or name == secrets.proxy_login_name}
        secrets.put_under_path(kept)
        self._saved = kept
        return len(kept)

    def save_if_changed(self) -> bool:
        """Written atomically (a temporary file, fsync, rename) when its entries changed."""
        if not _store_started(self.storage):
            return False
        entries = self.storage.secrets.under_path()
        if entries == self._saved:
            return False
        text = json.dumps({"format": FORMAT, "version": VERSION, "entries": entries})
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "w") as file:
            os.fchmod(file.fileno(), 0o600)
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)
        self._saved = entries
        return True


def _store_started(storage: Storage) -> bool:
    """Whether the embedded token store was ever asked anything: until then it holds nothing, and
    reading it would cost a start or a stop seconds (an SSM client, and moto's SSM backend)."""
    service = "secretsmanager" if storage.settings.github_token_store == "secretsmanager" else "ssm"
    models = sys.modules.get(f"moto.{service}.models")  # moto imports it at its first request, in seconds
    if models is None:
        return False
    regions = dict.get(getattr(models, f"{service}_backends"), ACCOUNT)  # dict's own get: moto's creates it
    return regions is not None and REGION in regions
