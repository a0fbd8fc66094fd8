"""OPML folders as collection names: readable, stable, distinct, and never starfeed's own GitHub one."""

from starfeed.sources import COLLECTION_NAME, collection_name


def test_folders_become_readable_names():
    assert collection_name(["Tech", "Programming"]) == "tech-programming"
    assert collection_name("Café & Life") == "cafe-life"


def test_a_folder_called_github_does_not_join_the_followed_accounts_stars():
    for title in ("GitHub", "-github-", "Ｇｉｔｈｕｂ", ["github"]):
        assert collection_name(title) == "github-folder"


def test_long_paths_sharing_a_prefix_stay_apart_and_fit():
    prefix = ["a" * 30, "b" * 30]
    one, two = collection_name([*prefix, "one"]), collection_name([*prefix, "two"])
    assert one != two and all(COLLECTION_NAME.fullmatch(n) for n in (one, two))
