"""A simulated GitHub REST API on loopback, for `make run`'s demo, the tests and the benchmark.

It answers what starfeed calls, shaped like GitHub (../shared/corpora/github holds GitHub's own
schemas; the tests check these bodies against them):
- GET /user/following: simple-user objects, paginated with Link; the next link points at another
  path (/user/{id}/following), as GitHub's sometimes does, so clients must follow it as given;
- GET /users/{login}/starred: repositories, or [{starred_at, repo}] with the star+json media type;
  ETag, and 304 for a matching If-None-Match (free when authenticated, as on GitHub);
- GET /users/{me}/received_events: what the followed accounts do, newest first: a WatchEvent for
  each star, plus any other activity generated (generate_activity) or added (burst); each event
  shows up after a lag that follows GitHub's warning (30 s to 6 h: mostly under a minute); at
  most 300 events and 90 days; ETag and a free 304, X-Poll-Interval (poll_interval);
- X-RateLimit-* on every response, over hourly windows of its clock.
Switches (attributes, or POST /_sim/{switch}): reject_token (401), exhaust (primary limit used up),
secondary (a 403 with Retry-After), failures (a burst of 5xx); timeline_status (an attribute: the
timeline alone answers it). GET /_sim/log is the request log.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import random
import threading
import time
import zlib
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from starfeed.local.loopback import Loopback

STAR_JSON = "application/vnd.github.star+json"
LIMIT = 5000
WINDOW = 3600

REPOS = (  # full_name, description, language, stargazers
    ("rust-lang/rust", "Empowering everyone to build reliable and efficient software.", "Rust", 98000),
    ("python/cpython", "The Python programming language", "Python", 63000),
    ("torvalds/linux", "Linux kernel source tree", "C", 180000),
    ("golang/go", "The Go programming language", "Go", 124000),
    ("denoland/deno", "A modern runtime for JavaScript and TypeScript.", "Rust", 97000),
    ("astral-sh/uv", "An extremely fast Python package and project manager, written in Rust.", "Rust", 50000),
    ("miniflux/v2", "Minimalist and opinionated feed reader", "Go", 7500),
    ("lemon24/reader", "A Python feed reader library.", "Python", 480),
    ("neovim/neovim", "Vim-fork focused on extensibility and usability", "Vim Script", 82000),
    ("sqlite/sqlite", "Official Git mirror of the SQLite source tree", "C", 7000),
    ("ziglang/zig", "General-purpose programming language and toolchain", "Zig", 36000),
    ("tailwindlabs/tailwindcss", "A utility-first CSS framework for rapid UI development.", "TypeScript", 84000),
    ("ggerganov/llama.cpp", "LLM inference in C/C++", "C++", 70000),
    ("pola-rs/polars", "Dataframes powered by a multithreaded, vectorized query engine", "Rust", 31000),
    ("htmx-org/htmx", "</> htmx - high power tools for HTML", "JavaScript", 39000),
    ("kovidgoyal/kitty", "Cross-platform, fast, feature-rich, GPU based terminal", "Python", 25000),
    ("tokio-rs/tokio", "A runtime for writing reliable asynchronous applications with Rust.", "Rust", 27000),
    ("aws/aws-sam-cli", "CLI tool to build, test, debug, and deploy Serverless applications using AWS SAM",
     "Python", 6500),
    ("getmoto/moto", "A library that allows you to easily mock out tests based on AWS infrastructure.",
     "Python", 7700),
    ("kurtmckee/feedparser", "Parse feeds in Python", "Python", 2000),
    ("oven-sh/bun", "Incredibly fast JavaScript runtime, bundler, test runner, and package manager",
     "Zig", 74000),
    ("jqlang/jq", "Command-line JSON processor", "C", 30000),
    ("BurntSushi/ripgrep", "ripgrep recursively searches directories for a regex pattern", "Rust", 48000),
    ("sharkdp/fd", "A simple, fast and user-friendly alternative to 'find'", "Rust", 34000),
)
# Beyond the well-known repositories above, made-up ones, so an account never stars one twice.
ADJECTIVES = ("tiny", "fast", "quiet", "lazy", "bright", "sturdy", "plain", "shiny", "async", "tidy")
NOUNS = ("parser", "cache", "router", "shell", "queue", "editor", "linter", "sampler", "proxy", "ledger")
POOL = len(REPOS) + 5000
NAMES = ("ada", "brian", "carmen", "dmitri", "eve", "farah", "grace", "hiro", "ines", "jonas", "kemi",
         "luca", "mei", "nadia", "omar", "priya", "quinn", "rosa", "sven", "tariq", "uma", "vera",
         "wen", "xavier", "yusuf", "zoe")


@dataclass
class Account:
    login: str
    user_id: int
    stars: list[tuple[float, int]] = field(default_factory=list)  # (starred_at, repo index), ascending


def starring_times(rng: random.Random, start: float, end: float, per_day: float) -> list[float]:
    """Realistic starring: sessions at a Poisson rate, busier in the account's waking hours, each
    session a burst of one to several stars minutes apart."""
    times, t = [], start
    awake = rng.uniform(0, 24)  # the hour this account is most active, UTC
    session_rate = per_day / 2.0 / 86400  # two stars a session on average
    while True:
        t += rng.expovariate(session_rate)
        if t >= end:
            return times
        hour = (t % 86400) / 3600
        if rng.random() > 0.35 + 0.65 * math.cos(math.pi * ((hour - awake) % 24) / 24) ** 2:
            continue  # thinned away from the active hours
        burst = 1 + int(rng.expovariate(1.0))
        times.extend(min(t + n * rng.uniform(30, 600), end - 1) for n in range(burst))


def population(count: int, start: float, end: float, seed: int = 7, busier: float = 1.0) -> list[Account]:
    """count followed accounts with heavy-tailed starring rates: most star a few times a month,
    a few many times a day, some not at all. busier multiplies every rate (the demo's is high, so
    stars arrive while someone watches)."""
    rng = random.Random(seed)
    accounts = []
    for n in range(count):
        login = NAMES[n % len(NAMES)] + ("" if n < len(NAMES) else str(n // len(NAMES)))
        per_day = 0.0 if rng.random() < 0.15 else busier * min(40.0, rng.lognormvariate(math.log(0.3), 1.5))
        times = sorted(starring_times(rng, start, end, per_day))[-POOL:] if per_day else []
        accounts.append(Account(login, 1000 + n, list(zip(times, rng.sample(range(POOL), len(times))))))
    return accounts


@dataclass
class Event:
    created: float
    kind: str  # WatchEvent, PushEvent, ...
    actor: Account
    repo: int  # an index into the repositories
    event_id: int = 0
    visible_at: float = 0.0

    def __post_init__(self):
        # GitHub's ids grow with time; a stable tie-break keeps two events of one millisecond apart.
        self.event_id = int(self.created * 1000) * 1000 + zlib.crc32(
            f"{self.actor.user_id}/{self.kind}/{self.repo}".encode()) % 1000
        # When it shows in timelines: 90% within a minute, 7% up to an hour, 3% up to 6 h.
        draw = random.Random(self.event_id)
        tier = draw.random()
        if tier < 0.90:
            self.visible_at = self.created + draw.uniform(30, 60)
        else:
            low, high = (60, 3600) if tier < 0.97 else (3600, 6 * 3600)
            self.visible_at = self.created + math.exp(draw.uniform(math.log(low), math.log(high)))


TIMELINE_EVENTS = 300  # what GitHub keeps of a timeline
TIMELINE_DAYS = 90
OTHER_KINDS = ("PushEvent", "IssuesEvent", "PullRequestEvent", "CreateEvent", "IssueCommentEvent")


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


class GitHubSim:
    def __init__(self, accounts: list[Account], token: str = "ghp_simulated", per_page_max: int = 100,
                 clock=time.time, host: str = "127.0.0.1", port: int = 0, me: str = "you", limit: int = LIMIT):
        self.accounts = {a.login: a for a in accounts}
        self.limit = limit  # requests an hour, as GitHub's primary limit
        self.token, self.per_page_max, self.clock, self.me = token, per_page_max, clock, me
        self.me_id = 1
        # Switches.
        self.reject_token = False
        self.exhausted = False
        self.secondary_retry_after: int | None = None  # next request gets a secondary limit
        self.failures = 0  # the next N requests get a 502
        self.poll_interval = 60  # X-Poll-Interval on the timeline
        self.timeline_status: int | None = None  # the timeline alone answers this (a token without its scope)
        self.activity: list[Event] = []  # events other than stars, ascending by creation
        self._stars: tuple[int, list[Event]] = (-1, [])  # star events, rebuilt when stars change
        self.log: list[dict] = []
        self._used: dict[int, int] = {}
        self._lock = threading.Lock()
        sim = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                sim._handle(self)

            def do_POST(self):
                sim._control(self)

            def log_message(self, *args):
                pass

        self._server = Loopback(Handler, host, port, name="github-sim")
        self.url = self._server.url

    def close(self) -> None:
        self._server.close()

    # The timeline -----------------------------------------------------------------------------

    def generate_activity(self, start: float, end: float, seed: int = 7, per_star: float = 2.0,
                          bursts_per_day: float = 0.5, burst: int = 400) -> None:
        """Other events than stars: about per_star of them for each star an account gives, and
        bursts (an account pushing `burst` times within two minutes), more than a timeline keeps."""
        rng, events = random.Random(seed), []
        for account in self.accounts.values():
            # The account's own starring rate over the window, times per_star.
            rate = per_star * sum(1 for t, _ in account.stars if start <= t < end) / (end - start)
            t = start
            while rate and (t := t + rng.expovariate(rate)) < end:
                events.append(Event(t, rng.choice(OTHER_KINDS), account, rng.randrange(POOL)))
        t, accounts = start, list(self.accounts.values())
        while bursts_per_day and accounts and (t := t + rng.expovariate(bursts_per_day / 86400)) < end:
            events += self.burst(rng.choice(accounts).login, burst, t, rng)
        self.activity = sorted(self.activity + events, key=lambda e: e.created)

    def burst(self, login: str, count: int, at: float, rng: random.Random | None = None,
              within: float = 120) -> list[Event]:
        """count PushEvents by one account within `within` seconds from `at` (a bot, a mass import)."""
        rng = rng or random.Random(at)
        account = self.accounts[login]
        events = [Event(at + rng.uniform(0, within), "PushEvent", account, rng.randrange(POOL)) for _ in range(count)]
        self.activity = sorted(self.activity + events, key=lambda e: e.created)
        return events

    def timeline(self, now: float) -> list[Event]:
        """What GET /users/{me}/received_events shows now: newest first, at most 300 events."""
        count = sum(len(a.stars) for a in self.accounts.values())
        if self._stars[0] != count:
            stars = [Event(t, "WatchEvent", a, r) for a in self.accounts.values() for t, r in a.stars]
            self._stars = (count, sorted(stars, key=lambda e: e.created))
        shown = []
        for events in (self._stars[1], self.activity):
            # Newest first; every event older than the longest lag has shown up already.
            taken = 0
            for n in range(bisect.bisect_right(events, now, key=lambda e: e.created) - 1, -1, -1):
                event = events[n]
                if event.created < now - TIMELINE_DAYS * 86400 or taken >= TIMELINE_EVENTS \
                        and event.created < now - 6 * 3600:
                    break
                if event.visible_at <= now:
                    shown.append(event)
                    taken += 1
        return sorted(shown, key=lambda e: -e.event_id)[:TIMELINE_EVENTS]

    # Switches over HTTP, for a running `make run` -----------------------------------------------

    def _control(self, request) -> None:
        switch = urlsplit(request.path).path.removeprefix("/_sim/")
        value = parse_qs(urlsplit(request.path).query).get("value", [""])[0]
        if switch == "reject_token":
            self.reject_token = value != "off"
        elif switch == "exhaust":
            self.exhausted = value != "off"
        elif switch == "secondary":
            self.secondary_retry_after = int(value or 60)
        elif switch == "failures":
            self.failures = int(value or 3)
        else:
            return self._send(request, 404, {"message": "unknown switch"})
        self._send(request, 200, {"switched": switch})

    # The API ---------------------------------------------------------------------------------

    def counted_in(self, window: int) -> int:
        """Requests counted against the limit in one hourly window (epoch // WINDOW)."""
        return self._used.get(window, 0)

    def _handle(self, request) -> None:
        now = self.clock()
        parts = urlsplit(request.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/_sim/log":
            return self._send(request, 200, self.log)
        entry = {"at": now, "path": request.path, "accept": request.headers.get("Accept"),
                 "if_none_match": request.headers.get("If-None-Match")}
        with self._lock:
            self.log.append(entry)
        auth = request.headers.get("Authorization", "")
        if self.reject_token or auth not in (f"Bearer {self.token}", f"token {self.token}"):
            return self._finish(request, entry, 401, {"message": "Bad credentials",
                                                      "documentation_url": "https://docs.github.com/rest"})
        window = int(now // WINDOW)
        reset = (window + 1) * WINDOW
        if self.exhausted or self._used.get(window, 0) >= self.limit:
            return self._finish(request, entry, 403, {
                "message": f"API rate limit exceeded for user ID {self.me_id}.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"},
                remaining=0, reset=reset)
        if self.secondary_retry_after is not None:
            retry_after, self.secondary_retry_after = self.secondary_retry_after, None
            return self._finish(request, entry, 403, {
                "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"},
                extra={"Retry-After": str(retry_after)}, reset=reset)
        if self.failures > 0:
            self.failures -= 1
            return self._finish(request, entry, 502, {"message": "Server Error"}, reset=reset)
        per_page = max(1, min(int(query.get("per_page", 30) or 30), self.per_page_max))
        page = max(1, int(query.get("page", 1) or 1))
        segments = parts.path.strip("/").split("/")
        if parts.path == "/user":
            return self._finish(request, entry, 200, _user(self.url, Account(self.me, self.me_id)), reset=reset)
        if parts.path == "/user/following" or segments[:1] == ["user"] and segments[2:] == ["following"]:
            items = [_user(self.url, a) for a in self.accounts.values()]
            next_path = f"/user/{self.me_id}/following"  # GitHub's own next links may change path
        elif len(segments) == 3 and segments[0] == "users" and segments[2] == "starred":
            account = self.accounts.get(segments[1])
            if account is None:
                return self._finish(request, entry, 404, {"message": "Not Found"}, reset=reset)
            star_json = STAR_JSON in (request.headers.get("Accept") or "")
            visible = [s for s in account.stars if s[0] <= now][::-1]  # newest first
            items = [{"starred_at": _iso(t), "repo": _repo(self.url, r)} if star_json else _repo(self.url, r)
                     for t, r in visible]
            next_path = parts.path
        elif segments == ["users", self.me, "received_events"]:
            if self.timeline_status:
                return self._finish(request, entry, self.timeline_status, {"message": "Resource not accessible"},
                                    reset=reset)
            items = [_event(self.url, e) for e in self.timeline(now)]
            next_path = parts.path
        else:
            return self._finish(request, entry, 404, {"message": "Not Found"}, reset=reset)
        body = items[(page - 1) * per_page: page * per_page]
        headers = {"X-Poll-Interval": str(self.poll_interval)} if next_path.endswith("/received_events") else {}
        if page * per_page < len(items):
            last = math.ceil(len(items) / per_page)
            headers["Link"] = (f'<{self.url}{next_path}?per_page={per_page}&page={page + 1}>; rel="next", '
                               f'<{self.url}{next_path}?per_page={per_page}&page={last}>; rel="last"')
        encoded = json.dumps(body).encode()
        etag = 'W/"' + hashlib.sha256(encoded).hexdigest()[:32] + '"'
        headers["ETag"] = etag
        if request.headers.get("If-None-Match") == etag:
            # Conditional requests answered 304 do not count against an authenticated limit.
            return self._finish(request, entry, 304, None, extra=headers, reset=reset, counted=False)
        self._finish(request, entry, 200, encoded, extra=headers, reset=reset)

    def _finish(self, request, entry: dict, status: int, body, extra: dict | None = None,
                remaining: int | None = None, reset: float | None = None, counted: bool = True) -> None:
        now = self.clock()
        window = int(now // WINDOW)
        with self._lock:
            if counted and status != 401:
                self._used[window] = self._used.get(window, 0) + 1
            used = self._used.get(window, 0)
        entry["status"] = status
        headers = {"X-RateLimit-Limit": str(self.limit),
                   "X-RateLimit-Remaining": str(remaining if remaining is not None else max(0, self.limit - used)),
                   "X-RateLimit-Used": str(used), "X-RateLimit-Reset": str(int(reset or (window + 1) * WINDOW)),
                   "X-RateLimit-Resource": "core", **(extra or {})}
        self._send(request, status, body, headers)

    def _send(self, request, status: int, body, headers: dict | None = None) -> None:
        payload = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json; charset=utf-8")
        request.send_header("Date", formatdate(usegmt=True))
        for name, value in (headers or {}).items():
            request.send_header(name, value)
        request.send_header("Content-Length", str(len(payload)))
        request.end_headers()
        request.wfile.write(payload)


def _event(api: str, event: Event) -> dict:
    """An event as GitHub's timelines list it."""
    full_name = (REPOS[event.repo] if event.repo < len(REPOS) else _made_up(event.repo))[0]
    actor = event.actor
    return {"id": str(event.event_id), "type": event.kind,
            "actor": {"id": actor.user_id, "login": actor.login, "display_login": actor.login, "gravatar_id": "",
                      "url": f"{api}/users/{actor.login}",
                      "avatar_url": f"https://avatars.githubusercontent.com/u/{actor.user_id}?"},
            "repo": {"id": 100000 + event.repo, "name": full_name, "url": f"{api}/repos/{full_name}"},
            "payload": {"action": "started"} if event.kind == "WatchEvent" else {},
            "public": True, "created_at": _iso(event.created)}


def _user(api: str, account: Account) -> dict:
    u = f"{api}/users/{account.login}"
    return {"login": account.login, "id": account.user_id, "node_id": f"MDQ6VXNlcj{account.user_id}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{account.user_id}?v=4", "gravatar_id": "",
            "url": u, "html_url": f"https://github.com/{account.login}", "followers_url": f"{u}/followers",
            "following_url": f"{u}/following{{/other_user}}", "gists_url": f"{u}/gists{{/gist_id}}",
            "starred_url": f"{u}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{u}/subscriptions",
            "organizations_url": f"{u}/orgs", "repos_url": f"{u}/repos", "events_url": f"{u}/events{{/privacy}}",
            "received_events_url": f"{u}/received_events", "type": "User", "site_admin": False}


_REPO_URLS = ("archive_url:/{archive_format}{/ref} assignees_url:/assignees{/user} blobs_url:/git/blobs{/sha} "
              "branches_url:/branches{/branch} collaborators_url:/collaborators{/collaborator} "
              "comments_url:/comments{/number} commits_url:/commits{/sha} compare_url:/compare/{base}...{head} "
              "contents_url:/contents/{+path} contributors_url:/contributors deployments_url:/deployments "
              "downloads_url:/downloads events_url:/events forks_url:/forks git_commits_url:/git/commits{/sha} "
              "git_refs_url:/git/refs{/sha} git_tags_url:/git/tags{/sha} hooks_url:/hooks "
              "issue_comment_url:/issues/comments{/number} issue_events_url:/issues/events{/number} "
              "issues_url:/issues{/number} keys_url:/keys{/key_id} labels_url:/labels{/name} "
              "languages_url:/languages merges_url:/merges milestones_url:/milestones{/number} "
              "notifications_url:/notifications{?since,all,participating} pulls_url:/pulls{/number} "
              "releases_url:/releases{/id} stargazers_url:/stargazers statuses_url:/statuses/{sha} "
              "subscribers_url:/subscribers subscription_url:/subscription tags_url:/tags teams_url:/teams "
              "trees_url:/git/trees{/sha}").split()


def _made_up(index: int) -> tuple[str, str, str | None, int]:
    adjective, noun = ADJECTIVES[index % 10], NOUNS[index // 10 % 10]
    owner = f"{NAMES[index % len(NAMES)]}-labs"
    language = (None, "Rust", "Go", "Python", "TypeScript", "C")[index % 6]
    return (f"{owner}/{adjective}-{noun}-{index}", f"A {adjective} {noun}, <em>for people in a hurry</em>",
            language, (index * 7919) % 20000)


def _repo(api: str, index: int) -> dict:
    full_name, description, language, stars = REPOS[index] if index < len(REPOS) else _made_up(index)
    owner, name = full_name.split("/")
    url, html = f"{api}/repos/{full_name}", f"https://github.com/{full_name}"
    repo = {"id": 100000 + index, "node_id": f"MDEwOlJlcG9zaXRvcnk{index}", "name": name, "full_name": full_name,
            "owner": _user(api, Account(owner, 500000 + index)), "private": False, "html_url": html,
            "description": description, "fork": False, "url": url, "homepage": None, "size": 1024,
            "stargazers_count": stars, "watchers_count": stars, "watchers": stars, "language": language,
            "forks_count": stars // 10, "forks": stars // 10, "open_issues_count": 100, "open_issues": 100,
            "default_branch": "main", "archived": False, "disabled": False, "mirror_url": None,
            "license": None, "has_issues": True, "has_projects": True, "has_downloads": True,
            "has_wiki": True, "has_pages": False, "git_url": f"git://github.com/{full_name}.git",
            "ssh_url": f"git@github.com:{full_name}.git", "clone_url": f"{html}.git", "svn_url": html,
            "created_at": "2010-06-16T20:39:03Z", "updated_at": "2026-11-01T00:00:00Z",
            "pushed_at": "2026-11-01T00:00:00Z"}
    repo.update({key: url + suffix for key, _, suffix in (u.partition(":") for u in _REPO_URLS)})
    return repo
