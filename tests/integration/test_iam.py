"""Each function's IAM policy in template.yaml grants exactly what its code calls.

A scenario drives every function through the local stack (feeds, a host pause, a failed record,
GitHub with its token, removal and disabling, every public route) while each AWS call is
recorded as the grant it needs; the template's statements are then held against that record in
both directions."""

import json
import time
from dataclasses import replace
from urllib.parse import quote, urlsplit

import pytest

from starfeed.cli import main
from starfeed.cursors import encode_sort_key
from starfeed.enrich.bedrock import BedrockAnalyzer
from starfeed.fetch.entries import store_entries
from starfeed.local.github_sim import Account, GitHubSim
from starfeed.local.github_sim import Event as TimelineEvent
from starfeed.local.template import load
from starfeed.model import Rule, RuleAction, RuleField, RuleMatch
from starfeed.sources import add_source
from starfeed.store import Storage

from aws_calls import recording
from conftest import ROOT, api_call, http_get
from converse import ConverseServer, text_answer
from origin import Origin, Reply, rss
from proxies import HttpProxy
from waiting import eventually
from websub_hub import Hub

FUNCTIONS = ("SchedulerFunction", "FetcherFunction", "RendererFunction", "ApiFunction", "EnricherFunction",
             "RestFunction", "WebSubFunction", "HistoryFunction")


def make_due(storage, source_id):
    storage.sources.change(source_id, {"next_check_at": time.time() - 1, "locked_until": None})


def granted(function: str, token_store: str = "ssm") -> set[tuple[str, str, str, str]]:
    """(function, action, logical resource, suffix) for every statement of the function."""
    template = load(ROOT / "template.yaml")
    grants = set()
    for policy in template["Resources"][function]["Properties"]["Policies"]:
        if "Fn::If" in policy:
            condition, when_ssm, otherwise = policy["Fn::If"]
            assert condition == "TokenInSsm"
            policy = when_ssm if token_store == "ssm" else otherwise
        for statement in policy["Statement"]:
            actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
            resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            for resource in resources:
                grants.update((function, action, *_logical(resource)) for action in actions)
    return grants


def _logical(resource) -> tuple[str, str]:
    if "Fn::GetAtt" in resource:
        return resource["Fn::GetAtt"][0], ""
    text = resource["Fn::Sub"]
    if "${GitHubTokenName}" in text:
        return "GitHubTokenName", ""
    if "${SourceSecretsPath}" in text:
        return "SourceSecretsPath", "/proxy" if "${SourceSecretsPath}/proxy" in text else ""
    if "${BedrockModelId}" in text:
        return "BedrockModelId", ""
    name, _, rest = text.partition(".Arn}")
    return name.removeprefix("${"), rest.removeprefix("/") if rest.startswith("/index") else rest


@pytest.fixture
def scenario(stack, storage, origin, other_origin, monkeypatch, api_url):
    """Every function's paths, recorded."""
    # Three followed accounts, each with a few stars of the last days: every call is made, on little data.
    now = time.time()
    sim = GitHubSim([Account(login, 1000 + n, [(now - (n + 2 * k + 1) * 86400, 10 * n + k) for k in range(4)])
                     for n, login in enumerate(("ada", "grace", "linus"))])
    settings = replace(storage.settings, github_api_url=sim.url)
    for name in FUNCTIONS:
        monkeypatch.setattr(stack.functions[name].module.storage, "settings", settings)
    monkeypatch.setenv("STARFEED_GITHUB_API_URL", sim.url)
    # The enricher on Bedrock, a loopback server speaking Converse standing in for it.
    bedrock = ConverseServer()
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", bedrock.url)
    enricher = stack.functions["EnricherFunction"].module
    monkeypatch.setattr(enricher, "analyzer", BedrockAnalyzer(settings.bedrock_model_id, settings.region))
    stack.drain()
    # After the drain, which may fetch what earlier tests left queued: its caches (the pace) start
    # cold, so the scenario makes every call a fetcher makes.
    monkeypatch.setattr(stack.functions["FetcherFunction"].module, "storage",
                        Storage(replace(settings, fetch_retry_seconds=1, sighting_refresh=0)))
    storage.hosts.clear_pause(settings.github_host)
    site, paced = Origin(), Origin()
    ssm = storage.client("ssm")
    ssm.put_parameter(Name="/starfeed/github-token", Value=sim.token, Type="SecureString", Overwrite=True)
    with recording(stack) as used:
        hour_ago = time.time() - 3600
        # Rules: read where entries are stored (the fetcher, the history walk, the enricher, whose
        # analysis puts an entry with a score in a rule set) and swept by the scheduler.
        scored = Rule("iam-scored", RuleAction.KEEP, (RuleMatch(RuleField.SCORE, "0.1"),), rule_set="iam-scored")
        assert storage.rules.save([scored], storage.rules.book(consistent=True)[1], "2026-11-28T00:00:00Z")
        # Seen, seen again, then gone from its feed: its sightings move from the digest to its item.
        kept = add_source(storage, origin.serve("/iam-kept.xml", Reply(200, rss(("i1", "Kept"))),
                                                Reply(200, rss(("i1", "Kept"), ("i6", "Later"))),
                                                Reply(200, rss(("i6", "Later")))), hour_ago, ["iam"])[0]
        removed = add_source(storage, origin.serve("/iam-removed.xml", Reply(200, rss(("i2", "Gone")))),
                             hour_ago)[0]
        # Another host, whose 429 pauses it; and the pace, stepped again by the first run.
        busy = add_source(storage, other_origin.serve("/iam-busy.xml", Reply(429, headers={"Retry-After": "60"})),
                          hour_ago)[0]
        # A website source on a host of its own: its robots.txt read (none: 404) and cached.
        add_source(storage, site.serve("/iam-page", Reply(200, b"<html><body><p>A page.</p></body></html>",
                                                                  {"Content-Type": "text/html"})),
                   hour_ago, kind="website")
        # A feed asked for with a cookie: its secret read from the token store by the fetcher alone.
        assert main(["source", "add", origin.serve("/iam-cookie.xml", Reply(200, rss(("ic1", "Cookie")))),
                     "--cookie", "session=iam", "--no-check"]) == 0
        assert main(["github", "sync"]) == 0
        storage.client("dynamodb").delete_item(TableName=storage.settings.stats_table, Key={"day": {"S": "pace"}})
        for _ in range(3):  # the follow list, then its accounts' stars
            stack.run_cycle()
        assert main(["github", "sync"]) == 0  # a follow list whose accounts are known already
        for _ in range(2):
            make_due(storage, kept.source_id)
            stack.run_cycle()
        # A rule added: the next run's sweep puts a stored entry in a set (its item, its
        # collection's copy and the set's written) and asks for its feeds.
        kept_rule = Rule("iam-kept", RuleAction.KEEP, (RuleMatch(RuleField.TITLE, "later"),), rule_set="iam-kept")
        assert storage.rules.save([scored, kept_rule], storage.rules.book(consistent=True)[1], "2026-11-28T00:00:01Z")
        stack.run_cycle()
        assert storage.analyses.entry(kept.source_id, "i6").rule_sets == ["iam-kept"]
        # A star the received-events timeline shows: its account is leased and queued at once.
        account, now = next(iter(sim.accounts.values())), time.time()
        starred_at = next(t for t in range(int(now) - 120, int(now) - 60)
                          if TimelineEvent(t, "WatchEvent", account, 5).visible_at <= now)
        account.stars.append((starred_at, 5))
        timeline = next(s for s in storage.sources.all() if s.kind == "github-timeline" and s.url.startswith(sim.url))
        make_due(storage, timeline.source_id)
        stack.run_cycle()
        assert storage.sources.get(timeline.source_id).timeline.hinted == 1
        # A deframed source: its articles downloaded (robots.txt read), analyzed, stored, rendered;
        # the model's first answer is malformed, so that failure is recorded on the source too.
        origin.serve("/robots.txt", Reply(404))
        origin.serve("/iam-article", Reply(200, b"<html><body><p>An article.</p></body></html>",
                                          {"Content-Type": "text/html"}))
        document = rss(("i3", "Framed"), ("i5", "Framed too"))
        for uid in (b"i3", b"i5"):
            document = document.replace(b"https://example.org/" + uid, f"{origin.url}/iam-article".encode())
        deframed = add_source(storage, origin.serve("/iam-deframed.xml", Reply(200, document)), hour_ago, ["iam"])[0]
        assert main(["source", "deframe", deframed.source_id, "on"]) == 0
        bedrock.replies.append((200, text_answer("No tool for me."), None))
        stack.run_cycle()
        entries = [storage.analyses.entry(deframed.source_id, uid) for uid in ("i3", "i5")]
        analyzed = [e for e in entries if e.analyzer_result]
        assert len(analyzed) == 1 and analyzed[0].analyzer_result["model"] == settings.bedrock_model_id
        assert analyzed[0].rule_sets == ["iam-scored"]
        # Over budget: one entry waits in place, one that waited often is put back as a new message.
        monkeypatch.setattr(enricher, "storage", Storage(replace(settings, analyzer_daily_calls=0)))
        waiting = {"messageId": "w1", "receiptHandle": "not-a-real-handle",
                   "body": json.dumps({"feed_id": deframed.source_id, "entry_uid": "i4"}),
                   "attributes": {"ApproximateReceiveCount": "1"}}
        store_entries(storage, [replace(analyzed[0], entry_uid="i4", analyzer_result=None)], time.time())
        stack.functions["EnricherFunction"].invoke({"Records": [
            waiting, {**waiting, "messageId": "w2", "attributes": {"ApproximateReceiveCount": "3"}}]})
        stack.sqs.purge_queue(QueueUrl=stack.queue("EnrichQueue"))
        stack.sqs.send_message(QueueUrl=stack.queue("FetchQueue"), MessageBody="not json",
                               MessageGroupId="iam", MessageDeduplicationId=f"iam-{time.time()}")
        stack.drain()  # a failed record is retried alone: its visibility changes
        assert main(["source", "remove", removed.source_id]) == 0
        assert main(["source", "disable", kept.source_id]) == 0
        stack.drain()
        assert main(["source", "enable", kept.source_id]) == 0
        stack.drain()
        # A collection stored by an older starfeed, without its copies: the render makes them.
        for copy in storage.records.CollectionEntry.query("iam"):
            copy.delete()
        storage.queues.send_render(["c/iam/feed"])
        stack.drain()
        older = encode_sort_key("2099-01-01T00:00:00Z#any")  # a page of everything stored
        for path in (f"/feed.xml?before={older}", f"/c/iam/feed.json?before={older}",
                     f"/s/{kept.source_id}/feed.atom?before={older}"):
            assert http_get(stack, path)["statusCode"] == 200, path
        for path in ("/", "/feed.xml", "/healthz", f"/s/{kept.source_id}/feed.xml", "/c/iam/feed.json",
                     f"/rss?url={quote(kept.url, safe='')}", "/api/item?url=https://example.org/i1",
                     "/api/site?root=127.0.0.1", "/stats", "/opml.xml", "/subscriptions.opml"):
            assert http_get(stack, path)["statusCode"] in (200, 404), path
        # The REST API, every route; subscribing to a removed deframed source's URL restores it
        # and queues its entries' analyses.
        added = api_call(stack, "POST", "/api/v1/feeds", {
            "url": origin.serve("/iam-rest.xml", Reply(200, rss(("iam-r1", "Rest")))), "backfill": 1,
            "collections": ["iam"]})
        assert added["statusCode"] == 201, added["body"]
        feed_id = json.loads(added["body"])["feed"]["id"]
        stack.run_cycle()
        for path in ("/api/v1/openapi.json", "/api/v1/feeds", f"/api/v1/feeds/{feed_id}",
                     f"/api/v1/feeds/{feed_id}/entries", "/api/v1/entries", "/api/v1/entries/iam-r1"):
            assert api_call(stack, "GET", path)["statusCode"] == 200, path
        raw = json.loads(api_call(stack, "GET", "/api/v1/entries/iam-r1")["body"])["links"]["raw"]
        assert api_call(stack, "GET", urlsplit(raw).path)["statusCode"] == 200
        assert api_call(stack, "POST", f"/api/v1/feeds/{feed_id}/refetch")["statusCode"] == 202
        # The rules: one added for the feed, listed with what it holds back, and removed.
        rule = api_call(stack, "POST", "/api/v1/rules", {"action": "block", "scope": f"source:{feed_id}",
                                                         "matches": [{"field": "title", "pattern": "iam"}]})
        assert rule["statusCode"] == 201, rule["body"]
        assert api_call(stack, "GET", "/api/v1/rules")["statusCode"] == 200
        rule_id = json.loads(rule["body"])["rule"]["rule_id"]
        assert api_call(stack, "DELETE", f"/api/v1/rules/{rule_id}")["statusCode"] == 200
        assert api_call(stack, "DELETE", f"/api/v1/feeds/{feed_id}")["statusCode"] == 200
        # Through STARFEED_PROXY: the REST API's check reads the proxy's login from the token store.
        proxy = HttpProxy(("iam", "proxy-login"))
        storage.secrets.put_proxy_login({"proxy": proxy.url(), "user": "iam", "password": "proxy-login"})
        rest = stack.functions["RestFunction"].module.storage
        usual_settings, rest.settings = rest.settings, replace(rest.settings, proxy=proxy.url())
        try:
            proxied = api_call(stack, "POST", "/api/v1/feeds", {
                "url": origin.serve("/iam-proxied.xml", Reply(200, rss(("iam-p1", "Proxied"))))})
            assert proxied["statusCode"] == 201 and proxy.relayed and not proxy.refused, proxied["body"]
        finally:
            rest.settings = usual_settings
            proxy.close()
        # A page to crawl, subscribed through the REST API: its host's robots.txt read where the fetchers
        # cache it, and its Crawl-delay turn taken, then refused to the next page while it holds.
        paced.serve("/robots.txt", Reply(200, b"User-agent: *\nCrawl-delay: 60\n"))
        for path, status in (("/iam-rest-page", 201), ("/iam-rest-other", 422)):
            crawled = api_call(stack, "POST", "/api/v1/feeds", {"url": paced.serve(path, Reply(
                200, b"<html><body><article><p>A page read through the REST API.</p></article></body></html>",
                {"Content-Type": "text/html"})), "website": True})
            assert crawled["statusCode"] == status, crawled["body"]
        # A history walked through the REST API: the feed, then its one archive document.
        archived = origin.serve("/iam-arch/1.xml", Reply(200, rss(("ia1", "Archived"), newest=1717243200)))
        current = rss(("ia2", "Current"), extra=f'<atom:link rel="prev-archive" href="{archived}"/>').replace(
            b'<rss version="2.0">', b'<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">')
        walked = add_source(storage, origin.serve("/iam-arch/feed.xml", Reply(200, current)), hour_ago, ["iam"])[0]
        # Asked for with a cookie: the walk reads the source's secret request options too.
        assert main(["source", "set", walked.source_id, "--cookie", "session=iam", "--no-check"]) == 0
        assert api_call(stack, "POST", f"/api/v1/feeds/{walked.source_id}/backfill")["statusCode"] == 202
        stack.drain()
        assert storage.sources.get(walked.source_id).history["entries"] == 2  # the feed's own and the archive's
        assert main(["source", "remove", deframed.source_id]) == 0
        restored = api_call(stack, "POST", "/api/v1/feeds", {"url": deframed.url})
        assert json.loads(restored["body"])["outcome"] == "restored"
        stack.drain()
        # A backfilled history older than the retention period: its day is named for the aggregate,
        # whose walk reads it at the end of the days it has (a page of the year 2020, a render
        # that shows every entry of today).
        add_source(storage, origin.serve("/iam-history.xml", Reply(200, rss(("ih1", "History"), newest=1735689600))),
                   hour_ago, backfill=1)
        stack.run_cycle()
        assert http_get(stack, f"/feed.json?before={encode_sort_key('2020-01-01T00:00:00Z#x')}")["statusCode"] == 200
        renderer = stack.functions["RendererFunction"].module
        usual, renderer.storage = renderer.storage, Storage(replace(settings, entry_retention_days=0,
                                                                    feed_item_limit=5000))
        try:
            storage.queues.send_render(["feed"])
            stack.drain()
        finally:
            renderer.storage = usual
        # WebSub: a feed announcing a hub is subscribed to, verified at the callback, and pushed to.
        hub = Hub(storage.settings.public_url, api_url)
        topic = f"{origin.url}/iam-pushed.xml"
        links = f'<{hub.url}>; rel="hub", <{topic}>; rel="self"'
        add_source(storage, origin.serve("/iam-pushed.xml", Reply(200, rss(("ip1", "Pushed")), {"Link": links})),
                   hour_ago)
        stack.run_cycle()
        eventually(lambda: hub.active, what="the hub's verified subscription")
        assert [r.status_code for r in hub.distribute(topic, rss(("ip2", "Pushed too")))] == [202]
        stack.drain()
        hub.close()
    yield used
    dlq = stack.queue("FetchDeadLetterQueue")

    def dead_lettered():  # the poison's last retries, until SQS moves it aside
        stack.drain()
        return stack.sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10).get("Messages")

    for message in eventually(dead_lettered, what="the poison in the dead-letter queue"):
        stack.sqs.delete_message(QueueUrl=dlq, ReceiptHandle=message["ReceiptHandle"])
    sim.close()
    storage.sources.delete(timeline.source_id)  # not read again at a closed port
    bedrock.close()
    site.close()
    paced.close()
    storage.hosts.clear_pause(busy.host)
    ssm.delete_parameter(Name="/starfeed/github-token")


def test_every_function_is_granted_exactly_what_its_code_calls(scenario):
    used = scenario
    assert {grant[0] for grant in used} == set(FUNCTIONS)  # the scenario ran every function
    allowed = set().union(*(granted(f) for f in FUNCTIONS))
    assert sorted(used - allowed) == [], "calls the template does not grant"
    assert sorted(allowed - used) == [], "grants no code path used"


def test_who_reads_the_github_token_the_sources_secrets_and_the_proxys_login():
    for store, action in (("ssm", "ssm:GetParameter"), ("secretsmanager", "secretsmanager:GetSecretValue")):
        for secret, allowed in ((("GitHubTokenName", ""), {"FetcherFunction"}),
                                (("SourceSecretsPath", ""), {"FetcherFunction", "HistoryFunction"}),
                                (("SourceSecretsPath", "/proxy"), {"RestFunction"})):  # the proxy's login alone
            readers = {f for f in FUNCTIONS for grant in granted(f, store) if grant[1:] == (action, *secret)}
            assert readers == allowed, (store, secret)


def test_only_the_enricher_calls_bedrock_and_only_its_model():
    callers = {grant for f in FUNCTIONS for grant in granted(f) if grant[1].startswith("bedrock:")}
    assert callers == {("EnricherFunction", "bedrock:InvokeModel", "BedrockModelId", "")}
    statement = next(s for p in load(ROOT / "template.yaml")["Resources"]["EnricherFunction"]["Properties"]["Policies"]
                     for s in p["Statement"] if s["Sid"] == "TheModel")
    assert statement["Resource"]["Fn::Sub"].endswith(":foundation-model/${BedrockModelId}")


def test_only_the_scheduler_writes_the_pace():
    template = load(ROOT / "template.yaml")
    for function in FUNCTIONS:
        for policy in template["Resources"][function]["Properties"]["Policies"]:
            for statement in policy.get("Statement", []):
                if statement["Resource"] != {"Fn::GetAtt": ["StatsTable", "Arn"]}:
                    continue
                keys = json.dumps(statement.get("Condition"))
                writes = {"dynamodb:UpdateItem", "dynamodb:PutItem"} & set(statement["Action"])
                assert "LeadingKeys" in keys, (function, statement["Sid"])
                if writes and function != "SchedulerFunction":  # the others write days' counters, or the rules
                    assert '"pace"' not in keys and ("????-??-??" in keys or '["rules"]' in keys), (
                        function, statement["Sid"])
