"""Properties of negotiation that hold for any Accept header (hypothesis), beside the example
table in test_negotiate.py."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starfeed.formats import FORMATS
from starfeed.serve.negotiate import MAX_ACCEPT_LENGTH, BadAccept, NotAcceptable, negotiate

# Hundreds of generated examples each: `make test` runs them, `make test-fast` does not.
pytestmark = pytest.mark.slow

NAMES = [f.name for f in FORMATS]
TYPES = [t for f in FORMATS for t in (f.media_type, *f.aliases)] + [
    "*/*", "application/*", "text/*", "text/html", "image/png", "application/xhtml+xml"]
QUALITIES = st.sampled_from(["", ";q=0", ";q=0.1", ";q=0.5", ";q=0.999", ";q=1", ";q=1.0", ";q=2", ";q=abc"])
ELEMENT = st.builds(lambda t, q, case: (t.upper() if case else t) + q, st.sampled_from(TYPES), QUALITIES,
                    st.booleans())
HEADERS = st.lists(ELEMENT, max_size=8).map(", ".join)
PROPERTY = settings(max_examples=500, deadline=None)


def choose(accept):
    try:
        return negotiate(accept)
    except NotAcceptable:
        return 406


@PROPERTY
@given(st.text(max_size=300))
def test_any_text_gives_a_format_or_a_406_never_an_exception(accept):
    assert choose(accept) in (*NAMES, 406)


@PROPERTY
@given(HEADERS)
def test_a_406_only_when_rss_is_refused_explicitly(accept):
    if choose(accept) == 406:
        assert "q=0" in accept.replace("q=0.", "q=x")


@PROPERTY
@given(HEADERS, st.sampled_from(FORMATS))
def test_naming_a_served_type_alone_gets_that_format(noise, fmt):
    accept = fmt.media_type
    assert choose(accept) == fmt.name
    # Adding ranges that name only types we do not serve changes nothing.
    unrelated = ", ".join(e for e in noise.split(", ") if e and e.split(";")[0].lower() in
                          ("text/html", "image/png", "application/xhtml+xml"))
    assert choose(", ".join(filter(None, [accept, unrelated]))) == fmt.name


@PROPERTY
@given(HEADERS)
def test_order_of_elements_does_not_matter(accept):
    elements = accept.split(", ")
    assert choose(", ".join(reversed(elements))) == choose(accept)


@PROPERTY
@given(HEADERS)
def test_case_of_types_does_not_matter(accept):
    assert choose(accept.upper().replace(";Q=", ";q=")) == choose(accept.lower())


def test_an_oversized_header_is_a_400_not_work():
    with pytest.raises(BadAccept):
        negotiate("a/b," * (MAX_ACCEPT_LENGTH // 4 + 1))
