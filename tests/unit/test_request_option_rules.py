"""A source's request options (docs/design.md#request-options): what is accepted and why the
rest is refused, which values are secret, what every view shows, and, against loopback servers
and proxies, where each value goes."""

import json

import pytest

from starfeed.fetch.http import asking, fetch
from starfeed.fetch.options import (
    REDACTED,
    Asked,
    OptionError,
    Secrets,
    apply,
    described,
    is_secret_header,
    login_off,
    parse_cookie,
    parse_header,
    parse_proxy,
    proxy_login_of,
    proxy_login_stored,
    sent_to,
    shown,
    via,
    with_login,
)
from starfeed.model import FailureClass, RequestOptions
from starfeed.settings import Settings

from origin import Origin, Reply, rss
from proxies import EGRESS, HttpProxy, Socks5Proxy

SETTINGS = Settings(connect_timeout=2, read_timeout=2, fetch_deadline=5, retry_backoff=0.01,
                    allow_private_networks="127.0.0.0/8")


@pytest.mark.parametrize(("name", "secret"), [
    ("Authorization", True), ("X-Api-Key", True), ("X-Auth-Token", True), ("X-Session-Id", True),
    ("Private-Token", True), ("X-Client-Secret", True), ("X-Amz-Signature", True),
    ("Accept-Language", False), ("Referer", False), ("X-Requested-With", False), ("DNT", False),
])
def test_which_headers_are_secret(name, secret):
    assert is_secret_header(name) is secret


@pytest.mark.parametrize(("text", "parsed"), [
    ("Accept-Language: fr", ("Accept-Language", "fr")),
    ("  X-Api-Key :  abc def  ", ("X-Api-Key", "abc def")),
    ("Authorization: Bearer t0k3n", ("Authorization", "Bearer t0k3n")),
    ("X-Empty:", ("X-Empty", "")),
])
def test_a_header_is_name_colon_value(text, parsed):
    assert parse_header(text) == parsed


@pytest.mark.parametrize(("text", "why"), [
    ("no colon here", "not 'Name: value'"),
    ("Bad Name: x", "not 'Name: value'"),
    (": x", "not 'Name: value'"),
    ("Host: evil.example", "set by starfeed itself"),
    ("If-None-Match: x", "set by starfeed itself"),
    ("Proxy-Authorization: x", "set by starfeed itself"),
    ("User-Agent: x", "--user-agent"),
    ("Cookie: a=b", "--cookie"),
    ("X-A: one\r\nX-B: two", "line break"),
    ("X-A: caf\u00e9", "not ASCII"),
    ("X-A: " + "a" * 5000, "at most 4,096"),
])
def test_a_header_that_cannot_be_sent_is_refused_with_the_reason(text, why):
    with pytest.raises(OptionError, match=why):
        parse_header(text)


def test_a_refused_secret_header_does_not_repeat_its_value():
    with pytest.raises(OptionError) as refused:
        parse_header("X-Api-Key: s3cr3t\nInjected: yes")
    assert "s3cr3t" not in str(refused.value)


@pytest.mark.parametrize(("text", "parsed"), [
    ("session=abc123", ("session", "abc123")),
    ("cf_clearance=a.b-c_d", ("cf_clearance", "a.b-c_d")),
    (' q = "quoted" ', ("q", '"quoted"')),
])
def test_a_cookie_is_name_equals_value(text, parsed):
    assert parse_cookie(text) == parsed


@pytest.mark.parametrize("text", ["novalue", "=x", "a b=c", "a=b c", "a=b;c=d", "a=b,c", "a=\\x"])
def test_a_cookie_a_cookie_header_cannot_carry_is_refused(text):
    with pytest.raises(OptionError, match="--cookie"):
        parse_cookie(text)


@pytest.mark.parametrize(("url", "shown_as", "userinfo"), [
    ("http://proxy.example:3128", "http://proxy.example:3128", None),
    ("https://proxy.example", "https://proxy.example:443", None),
    ("socks5://10.0.0.1", "socks5://10.0.0.1:1080", None),
    ("SOCKS5H://u:p%40ss@Proxy.Example:9050/", "socks5h://proxy.example:9050", ("u", "p@ss")),
    ("http://[::1]:8080", "http://[::1]:8080", None),
])
def test_a_proxy_url_is_taken_apart_and_shown_without_its_credentials(url, shown_as, userinfo):
    proxy = parse_proxy(url)
    assert (proxy.shown, proxy.userinfo) == (shown_as, userinfo)
    if userinfo:
        assert parse_proxy(proxy.url()).userinfo == userinfo


@pytest.mark.parametrize(("url", "why"), [
    ("ftp://proxy.example:21", "ftp: is no proxy scheme"),
    ("socks4://proxy.example:1080", "socks4: is no proxy scheme"),
    ("proxy.example:3128", "no proxy scheme"),
    ("http://:3128", "names no host"),
    ("http://proxy.example:99999", "port from 1 to 65535"),
    ("http://proxy.example:3128/path", "without a path"),
    ("http://a@b@proxy.example", "more than one '@'"),
    ("http://proxy.example :3128", "space"),
])
def test_a_proxy_that_cannot_be_used_is_refused_with_the_reason(url, why):
    with pytest.raises(OptionError, match=why):
        parse_proxy(url)


def test_apply_splits_the_secrets_from_what_a_source_keeps():
    asked = Asked(headers=["Authorization: Bearer tok-S1", "Accept-Language: fr", "X-Api-Key: k-S2"],
                  user_agent="Mozilla/5.0", cookies=["session=abc-S3", "cf_clearance=xyz-S4"],
                  proxy="socks5h://user-S5:pw-S6@proxy.example:1080")
    options, secrets = apply(asked, None, None)
    assert options.headers == [["Accept-Language", "fr"]]
    assert options.secret_headers == ["Authorization", "X-Api-Key"]
    assert options.cookies == ["session", "cf_clearance"] and options.user_agent == "Mozilla/5.0"
    assert options.proxy == "socks5h://proxy.example:1080" and options.proxy_credentials
    assert secrets == Secrets({"Authorization": "Bearer tok-S1", "X-Api-Key": "k-S2"},
                              {"session": "abc-S3", "cf_clearance": "xyz-S4"}, ("user-S5", "pw-S6"))
    kept = json.dumps([vars(options), shown(options), described(options)])
    assert not any(value in kept for value in secrets.values)
    assert Secrets.of(json.loads(json.dumps(secrets.stored()))) == secrets


def test_apply_changes_only_what_was_given():
    options, secrets = apply(Asked(headers=["X-Api-Key: k"], cookies=["s=1"], proxy="http://p.example:8080"),
                             None, None)
    changed, kept = apply(Asked(user_agent="UA"), options, secrets)
    assert (changed.secret_headers, changed.cookies, changed.proxy, changed.user_agent) == \
        (["X-Api-Key"], ["s"], "http://p.example:8080", "UA")
    assert kept == secrets
    cleared, gone = apply(Asked(headers=[""], cookies=[""], user_agent="", no_proxy=True), changed, kept)
    assert not cleared.configured and not cleared.has_secrets and gone == Secrets()


@pytest.mark.parametrize(("url", "without", "login"), [
    ("https://ada:s3cr%40t@example.org/feed.xml", "https://example.org/feed.xml", ("ada", "s3cr@t")),
    ("http://ada@example.org:8080/f?a=b@c", "http://example.org:8080/f?a=b@c", ("ada", "")),
    ("https://a@b:pw@example.org", "https://example.org", ("a@b", "pw")),  # its last @ ends it, as in a browser
    ("https://ada:pw@example.org\\@evil.example/", "https://example.org\\@evil.example/", ("ada", "pw")),
    ("https://example.org/a@b", "https://example.org/a@b", None),  # an @ in the path is no login
    ("https://:@example.org/", "https://example.org/", None),
    ("example.org/feed", "example.org/feed", None),
])
def test_a_urls_login_is_taken_off_it(url, without, login):
    assert login_off(url) == (without, login)


def test_a_urls_login_becomes_its_authorization_header_a_secret():
    url, asked = with_login("https://ada:pw-S1@example.org/feed.xml", Asked(headers=["Accept-Language: fr"]))
    options, secrets = apply(asked, None, None)
    assert url == "https://example.org/feed.xml"
    assert options.secret_headers == ["Authorization"] and options.headers == [["Accept-Language", "fr"]]
    assert secrets.headers == {"Authorization": "Basic YWRhOnB3LVMx"}  # ada:pw-S1
    assert "pw-S1" not in json.dumps([vars(options), shown(options), described(options), secrets.stored()])
    with pytest.raises(OptionError, match="one or the other"):
        apply(with_login("https://ada:pw@example.org/", Asked(headers=["authorization: Bearer t"]))[1], None, None)


def test_a_proxy_both_set_and_cleared_is_refused():
    with pytest.raises(OptionError, match="one or the other"):
        apply(Asked(proxy="http://p.example:1", no_proxy=True), None, None)


@pytest.mark.parametrize("stored", [None, [], {"headers": {"a": 1}}, {"cookies": "x"}, {"proxy": ["only"]}])
def test_secrets_not_as_starfeed_wrote_them_are_refused(stored):
    with pytest.raises(OptionError):
        Secrets.of(stored)


@pytest.mark.parametrize(("hop", "owner", "sent"), [
    (("https", "a.example", 443), ("https", "a.example", 443), True),
    (("http", "a.example", 80), ("https", "a.example", 443), False),  # another scheme
    (("https", "a.example", 8443), ("https", "a.example", 443), False),  # another port
    (("https", "b.example", 443), ("https", "a.example", 443), False),  # another host
    (("https", "a.example", 443), None, False),  # the chain left the origin once
])
def test_secrets_go_to_their_own_origin_only(hop, owner, sent):
    assert sent_to(hop, owner) is sent


def test_the_views_name_the_proxy_a_source_goes_through():
    own = RequestOptions(proxy="socks5://p.example:1080")
    assert via(own, "http://global.example:3128") == "socks5://p.example:1080"
    assert via(None, "http://u:pw@global.example:3128") == "http://global.example:3128 (STARFEED_PROXY)"
    assert via(None, "") is None and via(None, "ftp://x") == "STARFEED_PROXY (unusable)"
    assert described(None, "http://global.example:3128") == "through proxy http://global.example:3128 (STARFEED_PROXY)"


def test_a_proxy_whose_credentials_are_missing_cannot_be_used():
    options, _ = apply(Asked(proxy="http://u:p@p.example:1"), None, None)
    with pytest.raises(OptionError, match="credentials"):
        asking(options, Secrets(), SETTINGS)
    with pytest.raises(OptionError, match="STARFEED_PROXY"):
        asking(None, None, Settings(proxy="gopher://x"))


def test_starfeed_proxys_login_is_read_for_that_proxy_alone():
    settings = Settings(proxy="http://p.example:3128")
    stored = proxy_login_stored(parse_proxy("http://ada:pw-S1@p.example:3128"))
    assert stored == {"proxy": "http://p.example:3128", "user": "ada", "password": "pw-S1"}
    assert proxy_login_stored(parse_proxy("http://p.example:3128")) is None
    assert asking(None, None, settings, lambda: stored).proxy == "http://ada:pw-S1@p.example:3128"
    assert asking(None, None, settings, lambda: None).proxy == "http://p.example:3128"
    # A source's own proxy, or a login in STARFEED_PROXY itself: the token store is not read.
    assert asking(RequestOptions(proxy="socks5://own.example:1080"), None, settings, _never).proxy == \
        "socks5://own.example:1080"
    assert asking(None, None, Settings(proxy="http://u:p@p.example:3128"), _never).proxy == \
        "http://u:p@p.example:3128"
    with pytest.raises(OptionError, match="for the proxy http://p.example:3128, not STARFEED_PROXY's "
                                          "http://other.example:3128"):
        asking(None, None, Settings(proxy="http://other.example:3128"), lambda: stored)
    with pytest.raises(OptionError, match="not as starfeed wrote it"):
        proxy_login_of({"proxy": "http://p.example:3128", "user": 1}, parse_proxy("http://p.example:3128"))

    def unreadable():
        raise LookupError("starfeed/source-options/proxy cannot be read from the token store (AccessDenied)")

    with pytest.raises(OptionError, match="STARFEED_PROXY's login: .*AccessDenied"):
        asking(None, None, settings, unreadable)


def _never():
    raise AssertionError("the token store was read")


# Against loopback servers: where each value goes.

def _ask(**asked):
    return asking(*apply(Asked(**asked), None, None), SETTINGS)


def test_headers_and_cookies_reach_their_origin_and_raw_records_keep_them_redacted(origin):
    url = origin.serve("/members.xml", Reply(200, rss(("m1", "Members"))),
                       requires={"cookie": "session=abc", "x-api-key": "k1"})
    assert fetch(url, SETTINGS).status == 403
    result = fetch(url, SETTINGS, ask=_ask(headers=["X-Api-Key: k1", "Accept-Language: fr"], cookies=["session=abc"],
                                           user_agent="Mozilla/5.0 (test)"))
    assert result.status == 200 and result.error is None
    sent = origin.hits("/members.xml")[-1]
    assert (sent["cookie"], sent["x-api-key"], sent["accept-language"], sent["user-agent"]) == \
        ("session=abc", "k1", "fr", "Mozilla/5.0 (test)")
    assert result.request_headers["Cookie"] == result.request_headers["X-Api-Key"] == REDACTED
    assert "abc" not in json.dumps(result.request_headers) and "k1" not in json.dumps(result.request_headers)


def test_a_redirect_to_another_origin_carries_no_secret_and_the_chain_never_gets_them_back(origin, other_origin):
    back = origin.serve("/back.xml", Reply(200, rss(("b1", "Back"))))
    away = other_origin.serve("/away", Reply(302, headers={"Location": back}))
    start = origin.serve("/start", Reply(302, headers={"Location": away}))
    result = fetch(start, SETTINGS, ask=_ask(headers=["Authorization: Bearer tok", "X-Plain: p"],
                                             cookies=["session=abc"]))
    assert result.status == 200
    first, elsewhere, returned = origin.hits("/start")[-1], other_origin.hits("/away")[-1], origin.hits("/back.xml")[-1]
    assert (first["authorization"], first["cookie"]) == ("Bearer tok", "session=abc")
    for hop in (elsewhere, returned):
        assert "authorization" not in hop and "cookie" not in hop
        assert hop["x-plain"] == "p"  # no credential: it goes everywhere


@pytest.mark.parametrize(("proxy_class", "scheme"), [(HttpProxy, "http"), (Socks5Proxy, "socks5"),
                                                     (Socks5Proxy, "socks5h")])  # socks5h: the proxy resolves
def test_a_feed_reachable_only_through_a_proxy(origin, proxy_class, scheme):
    url = origin.serve("/proxied.xml", Reply(200, rss(("p1", "Proxied"))), client=EGRESS)
    assert fetch(url, SETTINGS).status == 403
    proxy = proxy_class(("user", "pw"))
    try:
        address = proxy.url(("user", "pw")).replace(f"{proxy_class.scheme}://", f"{scheme}://")
        result = fetch(url, SETTINGS, ask=_ask(proxy=address))
        assert (result.status, result.error) == (200, None) and proxy.relayed and not proxy.refused
        # The proxy's credentials are needed, and never kept with the raw record.
        assert "pw" not in json.dumps(result.request_headers)
        refused = fetch(url, SETTINGS, ask=_ask(proxy=proxy.url(("user", "wrong"))))
        assert refused.failure is FailureClass.CREDENTIALS and "proxy refuses its credentials" in refused.error
        assert proxy.refused == 1  # not retried: a retry would not mend it
    finally:
        proxy.close()


def test_through_a_proxy_the_target_is_still_checked(origin):
    url = origin.serve("/private.xml", Reply(200, rss(("x", "X"))))
    proxy = HttpProxy()
    try:
        result = fetch(url, Settings(allow_private_networks="0"), ask=_ask(proxy=proxy.url()))
        assert result.status is None and "private, loopback" in result.error
        assert proxy.relayed == []  # refused before the proxy was asked
        assert result.failure is FailureClass.NETWORK
    finally:
        proxy.close()


def test_an_unreachable_proxy_is_a_network_failure(origin):
    url = origin.serve("/f.xml", Reply(200, rss(("x", "X"))))
    result = fetch(url, SETTINGS, ask=_ask(proxy="http://127.0.0.1:9"))
    assert result.status is None and result.failure is FailureClass.NETWORK


def test_the_loopback_origin_sees_where_requests_come_from():
    origin = Origin()
    try:
        url = origin.serve("/x", Reply(200, b"x"))
        fetch(url, SETTINGS)
        assert origin.clients[-1] == ("/x", "127.0.0.1")
    finally:
        origin.close()


@pytest.mark.parametrize("options, why", [
    (RequestOptions(headers=[["X-A", "a\r\nInjected: 1"]]), "line break"),
    (RequestOptions(headers=[["only-one"]]), "not a [name, value] pair"),
    (RequestOptions(headers=[[1, 2]]), "not a [name, value] pair"),
    (RequestOptions(user_agent="ua\nx"), "line break")])
def test_stored_options_edited_by_hand_are_refused_before_any_request(options, why):
    with pytest.raises(OptionError, match=why.replace("[", r"\[").replace("]", r"\]")):
        asking(options, None, Settings())
