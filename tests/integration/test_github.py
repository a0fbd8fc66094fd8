"""The GitHub stars of everyone followed (docs/design.md#github), through the local stack and a simulated GitHub
API on loopback (real HTTP: Link pagination, ETag/304, rate-limit headers, failure switches)."""

import io
import json
import logging
import time
from dataclasses import replace
from xml.etree import ElementTree as ET

import pytest

from starfeed.cli import main
from starfeed.local.github_sim import Account, GitHubSim, population
from starfeed.local.github_sim import Event as GitHubEvent
from starfeed.store import Storage

from conftest import body_of, http_get, shared_corpus

FUNCTIONS = ("SchedulerFunction", "FetcherFunction", "RendererFunction", "ApiFunction")
HOUR = 3600


class Clock:
    """The simulation's clock: real time plus an offset, so stars can arrive on demand."""

    def __init__(self):
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@pytest.fixture
def github(stack, storage, monkeypatch):
    """A simulated GitHub the deployment's functions point at, with the simulation's token."""
    sims = []

    def start(accounts, **options) -> tuple[GitHubSim, Storage]:
        sim = GitHubSim(accounts, **options)
        sims.append(sim)
        settings = replace(storage.settings, github_api_url=sim.url)
        for name in FUNCTIONS:
            monkeypatch.setattr(stack.functions[name].module.storage, "settings", settings)
        monkeypatch.setenv("STARFEED_GITHUB_TOKEN", sim.token)
        monkeypatch.setenv("STARFEED_GITHUB_API_URL", sim.url)  # for the CLI
        # These tests read pages right after re-rendering them: no 30 s of warm cache.
        monkeypatch.setattr(stack.functions["ApiFunction"].module.app.feed_cache, "ttl", 0)
        # An earlier test's origin may have had this port, and left a pause on it.
        storage.hosts.clear_pause(settings.github_host)
        return sim, Storage(settings)

    yield start
    for sim in sims:
        sim.close()
    for source in storage.sources.all():  # a timeline left due would be read at a closed port
        if source.kind == "github-timeline":
            storage.sources.delete(source.source_id)
    ssm = storage.client("ssm")  # a token `github connect` stored must not outlive its test
    try:
        ssm.delete_parameter(Name="/starfeed/github-token")
    except ssm.exceptions.ParameterNotFound:
        pass


def cycles(stack, rounds: int = 2) -> None:
    """Scheduler runs, each drained through the fetcher and renderer (a synced follow list makes
    its accounts due for the next run)."""
    for _ in range(rounds):
        stack.run_cycle()


def connect(storage) -> None:
    from starfeed.kinds.github_following import new_following

    storage.sources.add(new_following(storage.settings, time.time()))


def github_sources(storage, kind="github-user"):
    return {(s.github.login if s.github else s.timeline.login if s.timeline else None): s
            for s in storage.sources.all() if s.kind == kind and s.url.startswith(storage.settings.github_api_url)}


def make_due(storage, sources) -> None:
    for source in sources:
        storage.sources.change(source.source_id, {"next_check_at": time.time()})


def starred(login, uid, stars):
    return Account(login, uid, stars)


def test_following_is_paginated_through_a_foreign_next_link_and_unfollowed_accounts_are_disabled(stack, github):
    # A server may give fewer than the 100 a page asks for: the next link leads, not the count.
    accounts = [starred(f"user{n}", 5000 + n, []) for n in range(23)]
    sim, storage = github(accounts, per_page_max=10)
    connect(storage)
    cycles(stack, 1)
    paths = [e["path"] for e in sim.log if "following" in e["path"]]
    assert paths == ["/user/following?per_page=100", "/user/1/following?per_page=10&page=2",
                     "/user/1/following?per_page=10&page=3"]
    users = github_sources(storage)
    assert len(users) == 23
    user7 = users["user7"]
    assert (user7.github.user_id, user7.github.last_starred_at, user7.enabled) == (5007, None, True)
    assert users["user7"].url == f"{sim.url}/users/user7/starred"
    # Unfollow two, rename one: the renamed account keeps its source.
    del sim.accounts["user1"], sim.accounts["user2"]
    sim.accounts["user3"].login = "user3-renamed"
    sim.accounts = {a.login: a for a in sim.accounts.values()}
    assert main(["github", "sync"]) == 0
    stack.run_cycle()
    users = github_sources(storage)
    assert not users["user1"].enabled and not users["user2"].enabled
    assert "user3" not in users and users["user3-renamed"].github.user_id == 5003
    assert sum(1 for u in users.values() if u.enabled) == 21


def test_stars_arrive_as_github_feed_items_with_conditional_requests_and_stop_at_a_known_star(stack, github, capsys):
    clock = Clock()
    now = clock()
    history = [(now - d * 86400, i) for i, d in enumerate((45, 20, 10, 3, 1))]  # 45 days ago is too old
    sim, storage = github([starred("dana", 42, history), starred("quiet", 43, [])], clock=clock)
    connect(storage)
    cycles(stack)
    starred_paths = [e for e in sim.log if e["path"].startswith("/users/dana/starred")]
    assert starred_paths[0]["accept"] == "application/vnd.github.star+json"
    assert "per_page=100" in starred_paths[0]["path"]
    dana = github_sources(storage)["dana"]
    assert dana.entry_count == 4  # the first sync reaches 30 days back
    assert dana.github.last_starred_at == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(history[-1][0]))
    assert dana.github.tier == "medium" and dana.reason.startswith("star EMA")
    quiet = github_sources(storage)["quiet"]
    assert (quiet.github.tier, quiet.interval) == ("low", 3600)  # fewer than three stars: the default, tier low
    assert main(["source", "list", "--wide"]) == 0
    row = next(r for r in capsys.readouterr().out.splitlines() if r.startswith(quiet.source_id))
    assert " 1h " in row and " low " in row

    # Nothing new: a conditional request, a 304, the attempt recorded and nothing else changed.
    storage.sources.change(dana.source_id, {"next_check_at": time.time()})
    stack.run_cycle()
    assert sim.log[-1]["if_none_match"] and sim.log[-1]["status"] == 304
    again = github_sources(storage)["dana"]
    assert again.status == "not-modified" and again.last_fetch_at > dana.last_fetch_at
    assert ((again.entry_count, again.github.last_starred_at, again.interval)
            == (4, dana.github.last_starred_at, dana.interval))

    # Dana stars rust-lang/rust now (newest first at render time, docs/design.md#github-feed).
    sim.accounts["dana"].stars.append((now + 60, 0))
    clock.offset = 120
    storage.sources.change(dana.source_id, {"next_check_at": time.time()})
    stack.run_cycle()
    assert github_sources(storage)["dana"].entry_count == 5
    response = http_get(stack, "/c/github/feed.xml")
    assert response["statusCode"] == 200 and response["headers"]["Content-Type"].startswith("application/rss+xml")
    channel = ET.fromstring(body_of(response)).find("channel")
    assert channel.findtext("title") == "GitHub Followings Stars"
    assert channel.findtext("link") == "https://github.com"
    assert "GitHub accounts you follow" in channel.findtext("description")
    assert channel.findtext("lastBuildDate")
    items = channel.findall("item")
    first = items[0]
    starred_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 60))
    assert first.findtext("title") == "dana starred rust-lang/rust"
    assert first.findtext("link") == "https://github.com/rust-lang/rust"
    assert first.find("guid").text == f"github-star://dana/rust-lang/rust/{starred_at}"
    assert first.find("guid").get("isPermaLink") == "false"
    assert first.findtext("description").startswith("Empowering everyone to build")
    assert "Language: Rust" in first.findtext("description")
    dates = [time.mktime(time.strptime(i.findtext("pubDate"), "%a, %d %b %Y %H:%M:%S %z")) for i in items]
    assert dates == sorted(dates, reverse=True)
    assert len({i.find("guid").text for i in items}) == len(items)
    for path, fragment in (("/c/github/feed.atom", "<feed"), ("/c/github/feed.json", '"version"')):
        assert fragment in body_of(http_get(stack, path))
    negotiated = http_get(stack, "/c/github/feed", {"accept": "application/feed+json"})
    assert json.loads(body_of(negotiated))["title"] == "GitHub Followings Stars"
    index = body_of(http_get(stack, "/c/github/"))
    assert "dana starred rust-lang/rust" in index and 'href="https://github.com/rust-lang/rust"' in index
    high = body_of(http_get(stack, "/c/github/?tier=high"))
    assert "dana starred" not in high and 'aria-current=page>high' in high
    assert "dana starred" in body_of(http_get(stack, "/c/github/?tier=medium"))
    assert http_get(stack, "/c/github/?tier=loud")["statusCode"] == 400


def test_a_renamed_account_keeps_its_stars_and_gets_no_duplicates(stack, github):
    now = time.time()
    sim, storage = github([starred("old-name", 4242, [(now - 3 * 3600, 1), (now - 2 * 3600, 2), (now - 3600, 3)])])
    connect(storage)
    cycles(stack)
    assert github_sources(storage)["old-name"].entry_count == 3
    sim.accounts = {"new-name": Account("new-name", 4242, sim.accounts["old-name"].stars + [(now - 60, 4)])}
    assert main(["github", "sync"]) == 0
    stack.run_cycle()  # the follow list: the account's source now has its new name
    make_due(storage, github_sources(storage).values())
    stack.run_cycle()
    renamed = github_sources(storage)["new-name"]
    assert renamed.entry_count == 4  # the three stored, and only the new star added
    entries = storage.entries.recent(renamed.source_id, 10)
    assert [e.title.split()[0] for e in entries] == ["new-name", "old-name", "old-name", "old-name"]


def test_a_secondary_rate_limit_pauses_every_github_call_and_the_users_come_back_after_it(stack, github):
    now = time.time()
    sim, storage = github(population(8, now - 10 * 86400, now, seed=3))
    connect(storage)
    stack.run_cycle()  # the follow list
    sim.secondary_retry_after = 900
    stack.run_cycle()
    host = storage.settings.github_host
    pause = storage.hosts.pause_of(host, time.time())
    assert pause and 880 <= pause["until"] - time.time() <= 900 and not pause["stopped"]
    assert "secondary rate limit" in pause["reason"]
    limited = [e for e in sim.log if e["status"] == 403]
    assert len(limited) == 1  # the pause held every other call
    users = github_sources(storage).values()
    assert all(u.next_check_at >= pause["until"] for u in users)
    requests = len(sim.log)
    make_due(storage, users)
    stack.run_cycle()  # due, but the host is paused: nobody is called
    assert len(sim.log) == requests
    assert all(u.next_check_at >= pause["until"] for u in github_sources(storage).values())
    storage.hosts.clear_pause(host)  # as if its time had passed
    make_due(storage, users)
    stack.run_cycle()
    assert len(sim.log) > requests and all(e["status"] in (200, 304) for e in sim.log[requests:])


def test_an_exhausted_primary_limit_waits_for_the_reset(stack, github):
    now = time.time()
    sim, storage = github(population(3, now - 86400, now, seed=5))
    sim.exhausted = True
    connect(storage)
    stack.run_cycle()
    pause = storage.hosts.pause_of(storage.settings.github_host, time.time())
    assert pause["until"] == (now // HOUR + 1) * HOUR
    [following] = github_sources(storage, "github-following").values()
    assert following.reason == "github-rate-limited" and "rate limit exhausted" in following.last_error
    assert following.consecutive_failures == 0  # GitHub's limit is not the source's fault
    assert following.next_check_at >= pause["until"]


def test_the_last_request_of_the_hour_pauses_github_until_the_reset(stack, github):
    now = time.time()
    sim, storage = github([starred(f"lim{n}", 700 + n, [(now - 60, n)]) for n in range(4)], limit=3)
    connect(storage)
    cycles(stack)
    assert [e["status"] for e in sim.log] == [200, 200, 200]  # the follow list, then two accounts
    pause = storage.hosts.pause_of(storage.settings.github_host, time.time())
    assert pause["until"] == (now // HOUR + 1) * HOUR and "exhausted" in pause["reason"]
    assert sum(u.entry_count for u in github_sources(storage).values()) == 2


def test_a_rejected_token_stops_github_only_says_why_everywhere_and_connect_resumes(
        stack, github, origin, capsys, monkeypatch):
    from starfeed.sources import add_source

    from origin import Reply, rss

    now = time.time()
    sim, storage = github(population(4, now - 86400, now, seed=9))
    connect(storage)
    cycles(stack)
    users = list(github_sources(storage).values())
    assert len(users) == 4
    feed, _ = add_source(storage, origin.serve("/other.xml", Reply(200, rss(("o", "Other")))), now - 3600)
    sim.reject_token = True
    make_due(storage, users)
    stack.run_cycle()
    reason = "GitHub token rejected: 401 Bad credentials; run `starfeed github connect`"
    assert len([e for e in sim.log if e["status"] == 401]) == 1  # one refusal stopped every other call
    assert storage.sources.get(feed.source_id).status == "ok"  # other sources unaffected
    assert main(["source", "list"]) == 0
    assert reason in capsys.readouterr().out
    assert reason in body_of(http_get(stack, "/"))
    assert reason in body_of(http_get(stack, "/stats"))
    requests = len(sim.log)
    make_due(storage, users)
    stack.run_cycle()
    assert len(sim.log) == requests  # stopped: no more calls
    sim.reject_token = False
    monkeypatch.setattr("sys.stdin", io.StringIO(sim.token + "\n"))
    assert main(["github", "connect", "--token-stdin"]) == 0
    out = capsys.readouterr().out
    assert "token for you stored in SSM parameter /starfeed/github-token" in out and sim.token not in out
    stack.run_cycle()
    assert storage.hosts.pause_of(storage.settings.github_host, time.time()) is None
    resumed = {e["path"].split("?")[0] for e in sim.log[requests:]}
    assert {f"/users/{u.github.login}/starred" for u in users} | {"/user/following"} <= resumed
    assert reason not in body_of(http_get(stack, "/"))
    assert main(["github", "status"]) == 0
    status = capsys.readouterr().out
    assert "rate limit: " in status and "of 5,000 left" in status
    assert "users: 4 followed" in status and "pause: none" in status


def test_a_burst_of_5xx_is_retried_three_times_then_waits_for_the_next_window(stack, github):
    now = time.time()
    sim, storage = github([starred("ivy", 77, [(now - 3600, 1)])])
    connect(storage)
    stack.run_cycle()
    sim.failures = 2
    stack.run_cycle()
    ivy = github_sources(storage)["ivy"]
    assert ivy.status == "ok" and ivy.entry_count == 1  # two 502s, then a success
    sim.failures = 4
    storage.sources.change(ivy.source_id, {"next_check_at": time.time()})
    stack.run_cycle()
    ivy = github_sources(storage)["ivy"]
    assert ivy.status == "error" and "502" in ivy.last_error and ivy.consecutive_failures == 1
    assert ivy.fetch_history[0]["at"] and ivy.fetch_history[0]["status"] == 502
    assert ivy.next_check_at - time.time() > 50 * 60  # the next window, not a hammering retry
    assert [e["status"] for e in sim.log[-4:]] == [502] * 4
    # Its policies hold as for any source: ten failures in a row park it as dead.
    storage.sources.change(ivy.source_id, {"consecutive_failures": 9, "next_check_at": time.time()})
    sim.failures = 4
    stack.run_cycle()
    ivy = github_sources(storage)["ivy"]
    assert (ivy.status, ivy.next_check_at, ivy.reason) == ("dead", None, "circuit-open after 10 failures")


def test_the_token_never_reaches_logs_raw_payloads_or_pages(stack, github, caplog):
    now = time.time()
    sim, storage = github([starred("kim", 88, [(now - 600, 2)])], token="ghp_s3cr3t_never_logged")
    caplog.set_level(logging.DEBUG)
    connect(storage)
    cycles(stack)
    assert github_sources(storage)["kim"].entry_count == 1
    assert sim.token not in caplog.text
    s3 = storage.client("s3")
    raw = storage.settings.raw_bucket
    for key in [o["Key"] for o in s3.list_objects_v2(Bucket=raw).get("Contents", [])]:
        assert sim.token.encode() not in s3.get_object(Bucket=raw, Key=key)["Body"].read()
    for path in ("/", "/c/github/", "/c/github/feed.xml", "/stats"):
        assert sim.token not in body_of(http_get(stack, path))


def test_the_simulated_api_answers_in_githubs_own_shapes():
    schemas = shared_corpus("github", "openapi-schemas")
    now = time.time()
    sim = GitHubSim(population(2, now - 5 * 86400, now, seed=1, busier=20))
    try:
        import requests

        auth = {"Authorization": f"Bearer {sim.token}"}
        login = next(a.login for a in sim.accounts.values() if a.stars)
        star = requests.get(f"{sim.url}/users/{login}/starred",
                            headers={**auth, "Accept": "application/vnd.github.star+json"}).json()[0]
        users = requests.get(f"{sim.url}/user/following", headers=auth).json()
    finally:
        sim.close()
    schema = json.loads((schemas / "users-username-starred.GET.deref.json").read_text())
    item = schema["responses"]["200"]["content"]["application/json"]["schema"]["anyOf"][0]["items"]
    assert set(item["required"]) <= set(star)
    assert set(item["properties"]["repo"]["required"]) <= set(star["repo"])
    assert set(item["properties"]["repo"]["properties"]["owner"]["required"]) <= set(star["repo"]["owner"])
    following = json.loads((schemas / "user-following.GET.deref.json").read_text())
    user_schema = following["responses"]["200"]["content"]["application/json"]["schema"]["items"]
    assert set(user_schema["required"]) <= set(users[0])


def test_a_star_in_the_timeline_reaches_the_feed_at_its_next_read_with_no_request_for_idle_accounts(
        stack, github, capsys):
    from starfeed.kinds.github import resume

    clock = Clock()
    now = clock()
    sim, storage = github([starred("dana", 42, [(now - d * 86400, i) for i, d in enumerate((5, 3, 1))]),
                           starred("eli", 43, [(now - 2 * 86400, 7)]), starred("quiet", 44, [])], clock=clock)
    resume(storage, now)  # as `starfeed github connect`: the follow list and the timeline, due now
    cycles(stack)
    timeline = github_sources(storage, "github-timeline")["you"]
    assert timeline.url == f"{sim.url}/users/you/received_events" and timeline.title == "GitHub timeline of you"
    assert timeline.timeline.newest_id and timeline.interval == 60  # GitHub's X-Poll-Interval
    assert timeline.timeline.hinted == 0  # the first read is a baseline: the first syncs took those

    # Dana stars rust-lang/rust; the timeline shows it (past GitHub's longest lag).
    sim.accounts["dana"].stars.append((now + 60, 0))
    clock.offset = 7 * HOUR
    before = len(sim.log)
    make_due(storage, [timeline])
    stack.run_cycle()
    assert [e["path"] for e in sim.log[before:]] == ["/users/you/received_events?per_page=100",
                                                     "/users/dana/starred?per_page=100"]
    channel = ET.fromstring(body_of(http_get(stack, "/c/github/feed.xml"))).find("channel")
    assert channel.find("item").findtext("title") == "dana starred rust-lang/rust"
    dana = github_sources(storage)["dana"]
    assert dana.github.timeline_covered and dana.interval == storage.settings.github_max_minutes * 60
    assert "the timeline announces its stars" in dana.reason
    timeline = github_sources(storage, "github-timeline")["you"]
    assert timeline.timeline.hinted == 1
    assert main(["source", "list"]) == 0
    listed = " ".join(capsys.readouterr().out.split())
    assert f"{timeline.source_id} read " in listed and "1 star(s) hinted, the last" in listed
    assert "1 account(s) announced by it, checked daily" in listed

    # Nothing new: one conditional request, answered 304, which GitHub does not count.
    make_due(storage, [timeline])
    stack.run_cycle()
    last = sim.log[-1]
    assert last["path"].startswith("/users/you/received_events") and last["status"] == 304 and last["if_none_match"]

    # A burst of 400 events between two reads: some stars may be lost, so Dana goes back to her EMA.
    sim.burst("eli", 400, clock() - 2 * HOUR)
    before = len(sim.log)
    make_due(storage, [timeline])
    stack.run_cycle()
    assert sum(1 for e in sim.log[before:] if "/received_events" in e["path"]) == 3  # 300 events, all new
    dana = github_sources(storage)["dana"]
    assert not dana.github.timeline_covered and dana.next_check_at <= time.time() + (dana.ewma_interarrival or HOUR)
    assert github_sources(storage, "github-timeline")["you"].timeline.overflowed_at
    assert main(["github", "status"]) == 0
    status = capsys.readouterr().out
    assert "timeline: read " in status and "last gap (over 300 events between reads)" in status

    # A token that may not read events: the timeline fails alone, and GitHub polling goes on.
    sim.timeline_status = 403
    make_due(storage, [timeline])
    stack.run_cycle()
    failing = github_sources(storage, "github-timeline")["you"]
    assert failing.status == "error" and "for the timeline only" in failing.last_error
    assert storage.hosts.pause_of(storage.settings.github_host, time.time()) is None
    sim.timeline_status = None

    # A timeline switched off hints nothing more: the accounts it covered go back to their EMA.
    storage.sources.change(dana.source_id, {"github": replace(dana.github, timeline_covered=True)})
    assert main(["source", "disable", timeline.source_id]) == 0
    assert not github_sources(storage)["dana"].github.timeline_covered
    assert main(["source", "enable", timeline.source_id]) == 0
    assert github_sources(storage, "github-timeline")["you"].next_check_at is not None


def test_the_simulated_timeline_has_github_s_window_lag_etag_and_poll_interval():
    import requests

    clock = Clock()
    now = clock()
    sim = GitHubSim([starred("dana", 42, [(now - 100 * 86400, 1), (now - 86400, 2)]), starred("eli", 43, [])],
                    clock=clock)
    try:
        auth = {"Authorization": f"Bearer {sim.token}"}
        url = f"{sim.url}/users/you/received_events?per_page=100"
        first = requests.get(url, headers=auth)
        events = first.json()
        assert first.headers["X-Poll-Interval"] == "60" and first.headers["ETag"]
        assert [(e["type"], e["actor"]["login"], e["payload"]) for e in events] == [
            ("WatchEvent", "dana", {"action": "started"})]  # 90 days at most: the older star is gone
        again = requests.get(url, headers={**auth, "If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304
        assert again.headers["X-RateLimit-Remaining"] == first.headers["X-RateLimit-Remaining"]
        # A star shows after its lag, never before it.
        sim.accounts["dana"].stars.append((now, 3))
        lag = GitHubEvent(now, "WatchEvent", sim.accounts["dana"], 3).visible_at - now
        assert 30 <= lag <= 6 * HOUR
        clock.offset = lag - 1
        assert len(requests.get(url, headers=auth).json()) == 1
        clock.offset = lag
        assert len(requests.get(url, headers=auth).json()) == 2
        # A burst past the window: the newest 300 events, three pages of 100, then no next link.
        sim.burst("eli", 400, now + HOUR)
        clock.offset = 8 * HOUR
        pages, page_url = [], url
        while page_url:
            response = requests.get(page_url, headers=auth)
            pages.append(response.json())
            page_url = response.links.get("next", {}).get("url")
        ids = [int(e["id"]) for page in pages for e in page]
        assert [len(p) for p in pages] == [100, 100, 100] and ids == sorted(ids, reverse=True)
        assert all(e["type"] == "PushEvent" for page in pages for e in page)  # the stars scrolled out
        sim.poll_interval = 120
        assert requests.get(url, headers=auth).headers["X-Poll-Interval"] == "120"
    finally:
        sim.close()
