"""An entry's verdict under the rules (rules/judge.py, docs/design.md#rule-verdict): every case of
the precedence, each field, words against regular expressions, negation, any/all, age, score,
tags, named sets, and why each rule matched."""

import time

import pytest

from starfeed.model import Entry, Rule, RuleAction, RuleField, RuleMatch, Source, Verdict
from starfeed.rules.grammar import check_book
from starfeed.rules.judge import Reason, RuleBook, Subject, judged
from starfeed.settings import Settings

NOW = 1_780_000_000.0  # 2026-05-28
BLOCK, KEEP, TAG = RuleAction.BLOCK, RuleAction.KEEP, RuleAction.TAG
F = RuleField
SUBJECT = Subject("src1", "Example Blog", "https://blog.example/feed", ("news", "tech"))


def stamp(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def entry(title="Hello world", **fields) -> Entry:
    fields.setdefault("first_seen", stamp(NOW))
    fields.setdefault("canonical_link", "https://blog.example/posts/hello")
    return Entry(entry_uid=fields.pop("uid", "e1"), feed_id="src1", title=title, **fields)


def rule(rule_id, action, *matches, **fields) -> Rule:
    return Rule(rule_id, action, tuple(RuleMatch(field, pattern, negated) for field, pattern, negated in
                                       (m if len(m) == 3 else (*m, False) for m in matches)), **fields)


def verdict(rules, item=None, subject=SUBJECT, now=NOW) -> Verdict:
    check_book(rules, Settings())
    return RuleBook.of(rules).judge(item or entry(), subject, now)


def test_no_rules_no_verdict():
    assert RuleBook.of([]).judge(entry(), SUBJECT, NOW) == Verdict()
    assert RuleBook.of([]).rule_sets == ()


def test_a_block_rule_that_matches_blocks_and_one_that_does_not_shows():
    assert verdict([rule("b", BLOCK, (F.TITLE, "hello"))]).blocked_by == "b"
    assert verdict([rule("b", BLOCK, (F.TITLE, "goodbye"))]) == Verdict()


# (rules, expected blocked_by): the precedence of docs/design.md#rule-verdict, level by level.
HELLO, BYE = (F.TITLE, "hello"), (F.TITLE, "goodbye")
PRECEDENCE = {
    "a keep at the source level beats a block at the same level":
        ([rule("b", BLOCK, HELLO, scope="source:src1"), rule("k", KEEP, HELLO, scope="source:src1")], None),
    "a keep at the source beats a global block: a narrower scope makes an exception":
        ([rule("b", BLOCK, HELLO), rule("k", KEEP, HELLO, scope="source:src1")], None),
    "a keep at a collection beats a global block":
        ([rule("b", BLOCK, HELLO), rule("k", KEEP, HELLO, scope="collection:tech")], None),
    "a source's block is not undone by a global keep":
        ([rule("k", KEEP, HELLO), rule("b", BLOCK, HELLO, scope="source:src1")], "b"),
    "a collection's block is not undone by a global keep":
        ([rule("k", KEEP, HELLO), rule("b", BLOCK, HELLO, scope="collection:news")], "b"),
    "a source's allowlist that does not match blocks, whatever the global keep says":
        ([rule("k", KEEP, HELLO), rule("only", KEEP, BYE, scope="source:src1")], "only"),
    "a global allowlist blocks what it does not match":
        ([rule("only", KEEP, BYE)], "only"),
    "a global allowlist that matches shows":
        ([rule("only", KEEP, HELLO)], None),
    "a global allowlist is the first keep rule that blocks":
        ([rule("only1", KEEP, BYE), rule("only2", KEEP, (F.TITLE, "other"))], "only1"),
    "a block beats the level's allowlist in naming the rule":
        ([rule("only", KEEP, BYE), rule("b", BLOCK, HELLO)], "b"),
    "the first matching block of a level is named":
        ([rule("b1", BLOCK, HELLO), rule("b2", BLOCK, HELLO)], "b1"),
    "a narrower level's block is named before a wider one's":
        ([rule("g", BLOCK, HELLO), rule("c", BLOCK, HELLO, scope="collection:news"),
          rule("s", BLOCK, HELLO, scope="source:src1")], "s"),
    "a collection's allowlist blocks, and an allowlist of another collection of the source counts too":
        ([rule("only", KEEP, BYE, scope="collection:tech")], "only"),
    "a keep rule of either collection keeps":
        ([rule("b", BLOCK, HELLO), rule("only", KEEP, BYE, scope="collection:tech"),
          rule("k", KEEP, HELLO, scope="collection:news")], None),
    "rules of another source do not judge":
        ([rule("b", BLOCK, HELLO, scope="source:other")], None),
    "rules of a collection the source is not in do not judge":
        ([rule("b", BLOCK, HELLO, scope="collection:sports"), rule("only", KEEP, BYE, scope="collection:x")], None),
    "an allowlist of a level that shows nothing wider leaves wider levels to decide":
        ([rule("k", KEEP, HELLO, scope="source:src1"), rule("only", KEEP, BYE)], None),
    "a level with no match and no keep rule asks the next":
        ([rule("s", BLOCK, BYE, scope="source:src1"), rule("g", BLOCK, HELLO)], "g"),
    "a tag rule neither keeps nor blocks":
        ([rule("t", TAG, HELLO, tag="greeting")], None),
    "a named set's rules judge nothing outside its feed":
        ([rule("b", BLOCK, HELLO, rule_set="cves"), rule("k", KEEP, BYE, rule_set="cves")], None),
}


@pytest.mark.parametrize("case", PRECEDENCE, ids=list(PRECEDENCE))
def test_the_verdict_is_decided_from_the_narrowest_scope_out(case):
    rules, blocked_by = PRECEDENCE[case]
    assert verdict(rules).blocked_by == blocked_by


def test_every_matching_tag_rule_adds_its_tag_once_in_the_books_order_blocked_or_not():
    rules = [rule("t1", TAG, HELLO, tag="greeting"), rule("t2", TAG, (F.HOST, "blog.example"), tag="blog",
                                                             scope="source:src1"),
             rule("t3", TAG, HELLO, tag="greeting", scope="collection:news"), rule("t4", TAG, BYE, tag="farewell"),
             rule("b", BLOCK, HELLO)]
    assert verdict(rules) == Verdict("b", ("greeting", "blog"), ())


def test_a_named_sets_feed_holds_what_its_keep_or_tag_rules_match_less_what_its_block_rules_match():
    rules = [rule("k", KEEP, HELLO, rule_set="hellos"), rule("t", TAG, (F.TITLE, "world"), tag="w", rule_set="worlds"),
             rule("b", BLOCK, (F.HOST, "blog.example"), rule_set="worlds"),
             rule("k2", KEEP, BYE, rule_set="byes"), rule("k3", KEEP, HELLO, rule_set="elsewhere", scope="source:x")]
    book = RuleBook.of(rules)
    assert book.rule_sets == ("byes", "elsewhere", "hellos", "worlds")
    assert book.judge(entry(), SUBJECT, NOW) == Verdict(None, (), ("hellos",))


def text_entry() -> Entry:
    return entry(title="Ask HN: Who is hiring?", summary="Patch for CVE-2026-1234 & more",
                 content="<p>Sponsored<br>con<b>tent</b> &lt;3</p>",
                 authors=[{"name": "Ada Lovelace", "email": "ada@example.org"}],
                 categories=["Security", "Rust lang"], canonical_link="https://News.Example.com:8443/item?id=7")


@pytest.mark.parametrize(("field", "pattern", "matches"), [
    (F.TITLE, "ask hn", True), (F.TITLE, "who is", True), (F.TITLE, "hiring", True), (F.TITLE, "hire", False),
    (F.TITLE, "ASK  HN", True), (F.TITLE, "hn who", False), (F.TITLE, "/^Ask HN:/", True),
    (F.TITLE, "/^ask hn:/", False), (F.TITLE, "/(?i)^ask hn:/", True), (F.TITLE, "hiring?", True),
    (F.TEXT, "cve-2026-1234", True), (F.TEXT, "/CVE-\\d+/", True), (F.TEXT, "patch for cve", True),
    (F.TEXT, "sponsored content", True), (F.TEXT, "b", False), (F.TEXT, "amp", False), (F.TEXT, "& more", True),
    (F.TEXT, "<3", True), (F.TEXT, "lt", False), (F.TEXT, "more sponsored", False), (F.TEXT, "/more\\s+Spon/", False),
    (F.AUTHOR, "ada", True), (F.AUTHOR, "ada@example.org", True), (F.AUTHOR, "lovelace ada", False),
    (F.LINK, "/item\\?id=7$/", True), (F.LINK, "news example com", False), (F.LINK, "news.example.com", True),
    (F.HOST, "news.example.com", True), (F.HOST, "/^news\\.example\\.com$/", True), (F.HOST, "8443", False),
    (F.CATEGORY, "security", True), (F.CATEGORY, "rust", True), (F.CATEGORY, "/^Rust$/", False),
    (F.CATEGORY, "/^Rust lang$/", True), (F.CATEGORY, "security rust", False),
    (F.SOURCE, "src1", True), (F.SOURCE, "example blog", True), (F.SOURCE, "/blog\\.example/", True),
    (F.SOURCE, "news", False),
])
def test_each_field_matched_by_words_or_a_regular_expression(field, pattern, matches):
    assert (verdict([rule("b", BLOCK, (field, pattern))], text_entry()).blocked_by == "b") is matches
    assert (verdict([rule("b", BLOCK, (field, pattern, True))], text_entry()).blocked_by == "b") is not matches


def test_the_text_is_the_summary_and_the_contents_text_once_when_one_starts_the_other():
    derived = entry(summary="Hello world. Hello…", content="<p>Hello <i>world</i>.</p><p>Hello world.</p>")
    assert RuleBook.of([rule("b", BLOCK, (F.TEXT, "/Hello…/"))]).judge(derived, SUBJECT, NOW).blocked_by is None
    book = RuleBook.of([rule("b", BLOCK, (F.TEXT, "/^Hello world\\. Hello world\\./"))])
    apart = entry(summary="Hello world.", content="<p>Hello world.</p>")
    assert RuleBook.of([rule("b", BLOCK, (F.TEXT, "/^Hello world\\.$/"))]).judge(apart, SUBJECT, NOW).blocked_by == "b"
    joined = entry(summary="Hello world.", content="<p>Goodbye.</p>")
    assert book.judge(joined, SUBJECT, NOW).blocked_by is None
    assert RuleBook.of([rule("b", BLOCK, (F.TEXT, "/^Goodbye/"))]).judge(joined, SUBJECT, NOW).blocked_by is None
    assert RuleBook.of([rule("b", BLOCK, (F.TEXT, "/Goodbye\\.$/"))]).judge(joined, SUBJECT, NOW).blocked_by == "b"


def test_words_are_whole_words_in_any_script_and_case():
    item = entry(title="Ünïcode Café — naïve résumé")
    assert verdict([rule("b", BLOCK, (F.TITLE, "café"))], item).blocked_by == "b"
    assert verdict([rule("b", BLOCK, (F.TITLE, "CAFÉ NAÏVE"))], item).blocked_by is None  # not consecutive
    assert verdict([rule("b", BLOCK, (F.TITLE, "caf"))], item).blocked_by is None
    assert verdict([rule("b", BLOCK, (F.TITLE, "ünïcode"))], item).blocked_by == "b"
    assert verdict([rule("b", BLOCK, (F.TITLE, "C++"))], entry(title="Why C++ is hard")).blocked_by == "b"
    assert verdict([rule("b", BLOCK, (F.TITLE, "C++"))], entry(title="Why C++x is hard")).blocked_by is None
    assert verdict([rule("b", BLOCK, (F.TITLE, "a.b"))], entry(title="aXb")).blocked_by is None


def test_an_absent_field_matches_nothing_and_its_negation_holds():
    item = entry(title=None, canonical_link=None)
    for field in (F.TITLE, F.TEXT, F.AUTHOR, F.LINK, F.HOST, F.CATEGORY):
        assert verdict([rule("b", BLOCK, (field, "x"))], item).blocked_by is None
        assert verdict([rule("b", BLOCK, (field, "x", True))], item).blocked_by == "b"


def test_all_matches_must_hold_unless_any():
    both = [(F.TITLE, "hello"), (F.HOST, "elsewhere.example")]
    assert verdict([rule("b", BLOCK, *both)]).blocked_by is None
    assert verdict([rule("b", BLOCK, *both, any=True)]).blocked_by == "b"
    assert verdict([rule("b", BLOCK, (F.TITLE, "hello"), (F.HOST, "elsewhere.example", True))]).blocked_by == "b"
    assert verdict([rule("b", BLOCK, (F.TITLE, "nothing"), (F.TITLE, "hello", True), any=True)]).blocked_by is None


@pytest.mark.parametrize(("days_old", "older_than", "matches"), [
    (8, "7", True), (6, "7", False), (0.75, "0.5", True), (0.25, "0.5", False)])
def test_age_is_counted_from_the_date_the_entry_sorts_by(days_old, older_than, matches):
    item = entry(published=stamp(NOW - days_old * 86400))
    assert (verdict([rule("b", BLOCK, (F.AGE, older_than))], item).blocked_by == "b") is matches
    assert (verdict([rule("b", BLOCK, (F.AGE, older_than, True))], item).blocked_by == "b") is not matches


def test_an_undated_entry_is_as_old_as_its_first_sighting():
    item = entry(first_seen=stamp(NOW - 10 * 86400))
    assert verdict([rule("b", BLOCK, (F.AGE, "7"))], item).blocked_by == "b"


@pytest.mark.parametrize(("result", "above", "matches"), [
    ({"score": 0.8}, "0.7", True), ({"score": 0.7}, "0.7", False), ({"score": 0.1}, "0.7", False),
    (None, "0.7", False), ({"score": "high"}, "0.7", False), ({"score": 0.01}, "0", True)])
def test_score_matches_an_analyzed_entry_scored_above_the_threshold(result, above, matches):
    item = entry(analyzer_result=result)
    assert (verdict([rule("b", BLOCK, (F.SCORE, above))], item).blocked_by == "b") is matches


def test_explain_says_why_each_rule_matched_in_the_books_order():
    rules = [rule("t", TAG, (F.TEXT, "/CVE-\\d+-\\d+/"), tag="security"),
             rule("n", BLOCK, (F.TITLE, "sponsored", True), (F.AUTHOR, "ada")),
             rule("miss", BLOCK, (F.TITLE, "nothing")),
             rule("s", KEEP, (F.AGE, "30", True), (F.SCORE, "0.5"), any=True, rule_set="recent")]
    reasons = RuleBook.of(rules).explain(text_entry(), SUBJECT, NOW)
    assert reasons == [
        Reason("t", TAG, "text matches /CVE-\\d+-\\d+/ at 'CVE-2026-1234'"),
        Reason("n", BLOCK, "title lacks 'sponsored' and author has 'ada'"),
        Reason("s", KEEP, "not older than 30 days"),
    ]


def test_explain_names_the_allowlist_that_blocks():
    reasons = RuleBook.of([rule("only", KEEP, BYE, scope="collection:news")]).explain(entry(), SUBJECT, NOW)
    assert reasons == [Reason("only", KEEP, "matches none of the keep rules of its collections")]


def test_the_subject_of_a_source_and_an_entry_judged():
    source = Source(source_id="abc", url="https://x.example/feed", title=None, collections=["a", "b"])
    assert Subject.of(source) == Subject("abc", "", "https://x.example/feed", ("a", "b"))
    item = judged(entry(), Verdict("b", ("t1", "t2"), ("s",)))
    assert (item.blocked_by, item.tags, item.rule_sets) == ("b", ["t1", "t2"], ["s"])
    assert Verdict.of(judged(item, Verdict())) == Verdict()


def test_a_pattern_built_to_backtrack_runs_in_linear_time():
    rules = [rule("evil", BLOCK, (F.TEXT, "/(a+)+$/"), (F.TITLE, "/(x|x?)+y/"), any=True),
             rule("evil2", TAG, (F.TEXT, "/(a|aa)*b/"), tag="t")]
    item = entry(title="x" * 5000, content="<p>" + "a" * 200_000 + "!</p>")
    started = time.process_time()
    assert verdict(rules, item) == Verdict()
    assert time.process_time() - started < 2


def test_a_field_judged_pattern_by_pattern_when_its_set_cannot_be_used_says_the_same():
    rules = [rule("b", BLOCK, (F.TITLE, "ask hn")), rule("t", TAG, (F.TITLE, "/Who is/"), tag="who"),
             rule("n", BLOCK, (F.CATEGORY, "rust", True)), rule("c", TAG, (F.CATEGORY, "security"), tag="sec")]
    item = text_entry()
    book, alone = RuleBook.of(rules), RuleBook.of(rules)
    for field_set in alone._fields.values():
        field_set.set = None
    assert book.judge(item, SUBJECT, NOW) == alone.judge(item, SUBJECT, NOW) == Verdict("b", ("who", "sec"), ())
    assert book.explain(item, SUBJECT, NOW) == alone.explain(item, SUBJECT, NOW)


def test_words_found_inside_other_words_are_not_whole_words():
    rules = [rule("b", BLOCK, (F.TITLE, "rust")), rule("c", BLOCK, (F.CATEGORY, "space"))]
    assert verdict(rules, entry(title="In trust we rust-proof", categories=["namespace"])).blocked_by == "b"
    assert verdict(rules, entry(title="In trust we trust", categories=["namespace", "spaces"])).blocked_by is None


def test_a_book_of_the_most_rules_allowed_compiles_into_sets():
    rules = [rule(f"r{n}", BLOCK, (F.TEXT, f"word{n} and phrase {n}"), (F.TITLE, f"/^Title {n}\\b/"))
             for n in range(Settings().rules_max)]
    book = RuleBook.of(rules)
    assert all(field_set.set is not None for field_set in book._fields.values())
    assert book.judge(entry(title="Title 7 of many", content="<p>It has word7 and phrase 7.</p>"),
                      SUBJECT, NOW).blocked_by == "r7"


def test_a_stored_rule_that_no_longer_compiles_judges_nothing_and_is_named():
    rules = [rule("bad", BLOCK, (F.TITLE, "/(?<=x)y/")), rule("scope", BLOCK, HELLO, scope="somewhere"),
             rule("age", BLOCK, (F.AGE, "soon")), rule("b", BLOCK, HELLO, rule_set="s"), rule("g", BLOCK, HELLO)]
    book = RuleBook.of(rules)
    assert [rule_id for rule_id, _ in book.refused] == ["bad", "scope", "age"]
    assert "look-around" in book.refused[0][1]
    assert book.rule_sets == ("s",)
    assert book.judge(entry(), SUBJECT, NOW) == Verdict("g", (), ())
