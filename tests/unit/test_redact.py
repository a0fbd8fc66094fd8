"""Whatever shows a subscription URL to the public redacts its credentials (urlpolicy.redact)."""

import pytest

from starfeed.urlpolicy import redact


@pytest.mark.parametrize(("url", "shown"), [
    ("https://example.org/feed.xml", "https://example.org/feed.xml"),
    ("https://user:pw@example.org/f", "https://example.org/f"),
    ("https://user:pw@[::1]:8080/f", "https://[::1]:8080/f"),
    ("https://example.org/f?token=abc&page=2", "https://example.org/f?token=REDACTED&page=2"),
    ("https://example.org/f?apiKey=abc", "https://example.org/f?apiKey=REDACTED"),
    ("https://example.org/f?X-Amz-Signature=abc&X-Amz-Date=1", "https://example.org/f?X-Amz-Signature=REDACTED&X-Amz-Date=1"),
    ("https://example.org/f?a%5Ftoken=abc", "https://example.org/f?a%5Ftoken=REDACTED"),
    # Old servers (and Python before 3.10) also split a query on ";".
    ("https://example.org/f?page=2;token=abc", "https://example.org/f?page=2;token=REDACTED"),
    # Path parameters (RFC 3986 section 3.3), as Java servers put sessions in them.
    ("https://example.org/feed;jsessionid=abc/rss", "https://example.org/feed;jsessionid=REDACTED/rss"),
    ("https://example.org/feed;token=abc", "https://example.org/feed;token=REDACTED"),
    ("https://example.org/a=b/feed", "https://example.org/a=b/feed"),  # no ";": a plain segment
    # A fragment never reaches the server: OAuth implicit grants put tokens there.
    ("https://example.org/f#access_token=abc", "https://example.org/f"),
    ("https://example.org/f?q=1#section", "https://example.org/f?q=1"),
    ("https://example.org/f?page=2&empty=", "https://example.org/f?page=2&empty="),
    ("http://[::1", "REDACTED"),
])
def test_credentials_never_show(url, shown):
    assert redact(url) == shown
