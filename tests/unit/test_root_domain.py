"""The site key (docs/design.md#root-domain; `feed list-by-root-domain`): the registrable domain, from the Public Suffix
List snapshot bundled with tldextract, never from the network."""

import socket

import pytest

from starfeed.model import root_domain_of


@pytest.mark.parametrize(("url", "site"), [
    ("https://news.example.com/feed", "example.com"),
    ("https://example.com/feed", "example.com"),
    ("https://www.bbc.co.uk/news/rss.xml", "bbc.co.uk"),
    ("https://a.b.example.com.au/rss", "example.com.au"),
    # Private suffixes: every user's site on a shared host is a site of its own.
    ("https://alice.github.io/feed.xml", "alice.github.io"),
    ("https://bob.github.io/feed.xml", "bob.github.io"),
    ("https://someone.blogspot.com/feeds/posts/default", "someone.blogspot.com"),
    ("https://feeds.feedburner.com/Example", "feedburner.com"),
    ("https://EXAMPLE.ORG:8443/feed", "example.org"),
    # Hosts the list does not know stand for themselves.
    ("http://127.0.0.1:8000/feed", "127.0.0.1"),
    ("http://[::1]:8000/feed", "::1"),
    ("http://localhost:3000/feed", "localhost"),
    ("http://intranet.corp/feed", "intranet.corp"),
])
def test_root_domain(url, site):
    assert root_domain_of(url) == site


def test_the_suffix_list_is_the_bundled_snapshot(monkeypatch, tmp_path):
    from starfeed import model

    model._public_suffixes.cache_clear()  # a fresh extractor, as a cold start builds one

    def no_network(*args, **kwargs):
        raise AssertionError("the Public Suffix List must not be fetched at run time")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert root_domain_of("https://carol.github.io/") == "carol.github.io"
    assert not any(tmp_path.iterdir())  # and nothing is cached on disk
