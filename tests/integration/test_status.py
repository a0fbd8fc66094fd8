"""`starfeed status` (docs/design.md#slos), one screen for an operator, against the local stack: the SLOs
measured from real fetches, the queues and a dead letter with the command that sends it back,
sources by status, GitHub's rate limit and the last scheduler run."""

import re
import time

from conftest import run_cli as run
from origin import Reply, rss


def verdict_follows(match, met, target: float) -> bool:
    """An SLO line's ok/MISS against its printed figure (rounded: at the target itself, either)."""
    figure = float(match.group(2))
    return figure == target or (match.group(1) == "ok  ") == met(figure)


def test_status_shows_the_slos_queues_dead_letters_sources_and_the_last_run(stack, storage, capsys, origin):
    url = origin.serve("/status.xml", Reply(200, rss(("st1", "Status"))))
    code, out, err = run(capsys, "source", "add", url)
    assert code == 0, err
    source_id = out.split()[1]
    stack.run_cycle()
    dead_letters = stack.queue("FetchDeadLetterQueue")
    arn = stack.sqs.get_queue_attributes(QueueUrl=dead_letters, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    stack.sqs.send_message(QueueUrl=dead_letters, MessageBody='{"source_id": "poison"}', MessageGroupId="status",
                           MessageDeduplicationId=f"status-{time.time()}")
    try:
        code, out, err = run(capsys, "status")
    finally:
        stack.sqs.purge_queue(QueueUrl=dead_letters)
        run(capsys, "source", "remove", source_id)
    assert code == 0, err
    # The shared stack's other sources decide the figures; each verdict must follow its figure.
    p99 = re.search(r"fetch latency p99\s+(ok  |MISS)\s+(\d+\.\d\d) s \(target: under 5 s\)", out)
    assert p99 and float(p99.group(2)) < 5 and p99.group(1) == "ok  ", out  # this fetch's own request was timed
    budget = re.search(r"error budget\s+(ok  |MISS)\s+(\d+\.\d)% failed on starfeed's side", out)
    assert budget and verdict_follows(budget, lambda share: share < 2.0, 2.0), out
    fresh = re.search(r"scheduler freshness\s+(ok  |MISS)\s+(\d+\.\d)% of [\d,]+ scheduled sources", out)
    assert fresh and verdict_follows(fresh, lambda share: share >= 95.0, 95.0), out
    assert re.search(r"^  fetch\s+\d+ /\s+\d+ /\s+1$", out, re.M), out
    assert "1 dead letter(s) in fetch" in out
    assert f"aws sqs start-message-move-task --source-arn {arn}" in out
    assert re.search(r"^sources: .*\d+ ok", out, re.M), out
    assert "GitHub rate limit: " in out
    run_line = re.search(r"^scheduler: last run (\S+ \S+) UTC \((\d+)s ago\), (\d+) due, (\d+) leased", out, re.M)
    assert run_line and int(run_line.group(3)) >= 1 and int(run_line.group(4)) >= 1, out
