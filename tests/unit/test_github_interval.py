"""Seed 000's scenarios for the per-user interval."""

from starfeed.schedule.github import tier_of, user_interval

MINUTE = 60.0


def stars(*minutes: float) -> list[float]:
    return [m * MINUTE for m in minutes]


def test_eve_with_fewer_than_three_stars_gets_the_clamped_default_and_tier_low():
    eve = user_interval(stars(0, 30), None, 1, default=60, low=10, high=10080)
    assert (eve.minutes, eve.tier, eve.ema) == (60, "low", None)
    assert user_interval(stars(0), None, 0, default=5, low=10, high=10080).minutes == 10
    assert user_interval([], None, 0, default=99999, low=10, high=10080).minutes == 10080


def test_frank_ema_90_and_a_star_30_minutes_later_gives_72():
    result = user_interval(stars(0, 100, 200, 230), 90.0, 1, default=60, low=10, high=10080)
    assert round(result.minutes, 6) == 72 and result.ema == result.minutes


def test_grace_at_45_minutes_is_high_activity():
    assert tier_of(45) == "high" and tier_of(60) == "high"
    assert tier_of(61) == "medium" and tier_of(1440) == "medium" and tier_of(1441) == "low"


def test_seeding_averages_all_gaps_before_the_first_update():
    # Gaps 60 and 120: seed 90, then 0.3 * 120 + 0.7 * 90 = 99.
    result = user_interval(stars(0, 60, 180), None, 2, default=60, low=10, high=10080)
    assert round(result.minutes, 6) == 99 and result.tier == "medium"


def test_bounds_never_leave_10_to_10080_minutes():
    busy = user_interval(stars(0, 1, 2, 3), 1.0, 1, default=60, low=1, high=99999)
    assert busy.minutes == 10
    quiet = user_interval(stars(0, 20000, 40000), None, 2, default=60, low=10, high=99999)
    assert quiet.minutes == 10080 and quiet.tier == "low"
