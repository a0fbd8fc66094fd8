"""Settings read from the environment: an interval model with a name that does nothing is refused."""

import pytest

from starfeed.settings import INTERVAL_MODELS, Settings


@pytest.mark.parametrize("model", INTERVAL_MODELS)
def test_each_interval_model_is_read(model):
    assert Settings.from_env({"STARFEED_INTERVAL_MODEL": model}).interval_model == model


@pytest.mark.parametrize("model", ["seed", "EWMA", "blend"])
def test_an_unknown_interval_model_is_refused_where_it_is_read(model):
    with pytest.raises(ValueError, match="STARFEED_INTERVAL_MODEL=.*expected one of rhythm, sqrt, ewma"):
        Settings.from_env({"STARFEED_INTERVAL_MODEL": model})
    with pytest.raises(ValueError, match="STARFEED_INTERVAL_MODEL"):
        Settings(interval_model=model)
