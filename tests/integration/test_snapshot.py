"""`make run`'s saved state on the local stack: a file it cannot use is moved aside, byte for
byte, with one line that says why and that the start goes on empty (test_local_run.py sees that
line as a start prints it)."""

import gzip
import json
import logging

import pytest

from starfeed.local.snapshot import FORMAT, SNAPSHOT_FILE, VERSION, restore


@pytest.mark.parametrize("content, why", [
    (b"", "corrupt or partial"), (b"\x1f\x8b\x08\x00garbage", "corrupt or partial"),
    (gzip.compress(b'{"format": "other"}'), "not a starfeed state file"),
    (gzip.compress(b'{"format": "starfeed-local-state", "version": 99, "tables": {}}'), "format version 99"),
    (gzip.compress(json.dumps({"format": FORMAT, "version": VERSION, "tables": {"Gone": {}}, "buckets": {},
                               "queues": {}}).encode()), "names tables template.yaml no longer has")],
    # Named: gzip writes the time into its bytes, and pytest-xdist's workers must agree on each test's name.
    ids=["empty", "garbage", "another-format", "a-later-version", "a-table-gone"])
def test_an_unusable_snapshot_is_moved_aside_with_one_clear_line(stack, tmp_path, caplog, content, why):
    path = tmp_path / SNAPSHOT_FILE
    path.write_bytes(content)
    with caplog.at_level(logging.INFO, logger="starfeed.local.snapshot"):
        assert restore(stack.stack, path) is None
    lines = [r.getMessage() for r in caplog.records]
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(SNAPSHOT_FILE + ".unreadable-")]
    assert len(aside) == 1 and aside[0].read_bytes() == content and not path.exists()
    assert len(lines) == 1 and why in lines[0] and str(aside[0]) in lines[0] and "started empty" in lines[0]
