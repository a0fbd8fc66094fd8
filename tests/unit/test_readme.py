"""README.md stays true: every setting the code reads is documented."""

from pathlib import Path

from starfeed.settings import env_names

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_every_setting_is_in_the_readme():
    missing = [name for name in env_names().values() if f"`{name}`" not in README]
    assert not missing


def test_the_two_commands_come_first():
    assert README.index("make run") < README.index("## Deploy")
    assert README.index("make test") < README.index("## Deploy")
