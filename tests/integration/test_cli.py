"""The starfeed command against the local stack."""

import pytest

from origin import Reply, rss
from starfeed.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_add_list_remove(stack, capsys, origin):
    url = origin.serve("/cli.xml", Reply(200, rss(("x", "X"), title="CLI feed")))
    code, out, _ = run(capsys, "source", "add", url)
    assert code == 0 and out.startswith("added ")
    source_id = out.split()[1]
    assert run(capsys, "source", "add", url)[1].startswith("already subscribed:")
    stack.run_cycle()
    code, out, _ = run(capsys, "source", "list")
    header, *rows = out.splitlines()
    assert header.split() == ["ID", "URL", "TITLE", "STATUS", "INTERVAL", "TIER", "LAST", "FETCH",
                              "NEXT", "CHECK", "REASON", "FAILURES", "LAST", "ERROR"]
    row = next(r for r in rows if r.startswith(source_id))
    assert url in row and "CLI feed" in row and " ok " in row and " in " in row
    assert run(capsys, "source", "remove", source_id)[0] == 0
    assert source_id not in run(capsys, "source", "list")[1]
    code, _, err = run(capsys, "source", "remove", source_id)
    assert code == 1 and "no source with id" in err


def test_a_broken_source_lists_its_error_and_next_check(stack, capsys):
    code, out, _ = run(capsys, "source", "add", "http://127.0.0.1:9/nothing.xml")
    source_id = out.split()[1]
    stack.run_cycle()
    row = next(r for r in run(capsys, "source", "list")[1].splitlines() if r.startswith(source_id))
    assert " error " in row and "could not connect" in row and " in " in row


def test_a_bad_url_is_refused_with_a_reason(stack, capsys):
    code, _, err = run(capsys, "source", "add", "ftp://example.org/feed")
    assert code == 1 and "not an http(s) URL" in err


def test_opml_import(stack, capsys, tmp_path, origin):
    urls = [origin.serve(f"/o{n}.xml", Reply(200, rss(("o", "O")))) for n in range(3)]
    opml = tmp_path / "subs.opml"
    opml.write_text('<?xml version="1.0"?><opml version="2.0"><head><title>t</title></head><body>'
                    f'<outline text="a" type="rss" xmlUrl="{urls[0]}"/>'
                    f'<outline text="folder"><outline text="b" type="rss" xmlUrl="{urls[1]}"/>'
                    f'<outline text="c" type="rss" xmlUrl="{urls[2]}"/></outline></body></opml>')
    code, out, _ = run(capsys, "opml", "import", str(opml))
    assert code == 0 and out.startswith(f"imported 3 new sources of 3 in {opml}")
    import time as clock

    checks = [s.next_check_at for s in stack_sources(stack) if s.url in urls]
    assert len(checks) == 3 and all(c <= clock.time() + 60 for c in checks)  # spread over 60 s
    listed = run(capsys, "source", "list")[1]
    assert all(u in listed for u in urls)


@pytest.mark.parametrize("content", ["<html/>", "not xml at all <"])
def test_opml_import_of_something_else_fails_clearly(capsys, tmp_path, content):
    bad = tmp_path / "bad.opml"
    bad.write_text(content)
    code, _, err = run(capsys, "opml", "import", str(bad))
    assert code == 1 and ("not OPML" in err or "cannot read OPML" in err)


def test_without_a_stack_the_cli_says_how_to_start_one(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("SOURCES_TABLE", raising=False)
    monkeypatch.setenv("STARFEED_STATE_DIR", str(tmp_path))
    code, _, err = run(capsys, "source", "list")
    assert code == 1 and "make run" in err


def test_stack_name_reads_the_deployed_stacks_outputs(stack, capsys, monkeypatch, origin):
    """--stack NAME finds the tables through CloudFormation outputs (moto implements them)."""
    import json as _json

    import boto3

    outputs = {"SourcesTableName": stack.environment["SOURCES_TABLE"],
               "EntriesTableName": stack.environment["ENTRIES_TABLE"]}
    template = {"Resources": {"Nothing": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
                "Outputs": {k: {"Value": v} for k, v in outputs.items()}}
    boto3.client("cloudformation").create_stack(StackName="starfeed-prod",
                                                TemplateBody=_json.dumps(template))
    monkeypatch.setenv("SOURCES_TABLE", "a-table-that-does-not-exist")
    url = origin.serve("/via-stack.xml", Reply(200, rss(("s", "S"))))
    assert run(capsys, "--stack", "starfeed-prod", "source", "add", url)[0] == 0
    assert url in run(capsys, "--stack", "starfeed-prod", "source", "list")[1]


def stack_sources(stack):
    from starfeed.settings import Settings
    from starfeed.store import Storage

    return Storage(Settings.from_env(stack.environment)).catalog.list_sources()
