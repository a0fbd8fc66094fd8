"""The cost model's arithmetic (bench/cost.py) on fixed counts: no stack, no simulation."""

import re
from collections import Counter
from dataclasses import replace

import pytest

from starfeed.bench import cost
from starfeed.bench.cost import Options, Population, Units, Usage, bill

SIZES = {"source_item": 4096.0, "entry_item": 1000.0, "collection_entry_item": 500.0,
         "rendered_object": 10_000.0, "raw_payload": 20_000.0}


def units(**per_fetch) -> Units:
    fetch = per_fetch.get("fetch", Usage(s3_put=2, wru=4, rru=1))
    return Units(per_fetch={"304": fetch, "200 same bytes": fetch, "200 other bytes": fetch, "one new entry": fetch},
                 per_extra_entry=Usage(), per_tick=Usage(), pace_step=Usage(),
                 per_reader_request=Usage(lambda_requests=Counter({"ApiFunction": 1}), s3_get=1),
                 per_counter_flush=Usage(wru=1), log_bytes_per_fetch_now=0.0, pace_cpu_per_source=0.0,
                 sizes=SIZES, memory={"SchedulerFunction": 256}, cycle={}, sources=10)


POLLS = cost.ESM_IDLE_RECEIVES_PER_MINUTE * cost.MONTH_SECONDS / 60  # a month of one queue's long polls
ONLY_304 = Population(fetches=10, not_modified=10, with_new=0, new_entries=0, errors=0)


def test_each_line_is_its_count_times_its_price():
    b = bill(units(), ONLY_304, 1000, 0, Options(log_bytes_per_fetch=500, custom_metrics=12))
    fetches = 1000 * 10
    assert b["S3 requests"]["list"] == pytest.approx(fetches * 2 * 0.005 / 1000)
    assert b["DynamoDB writes"]["list"] == pytest.approx(fetches * 4 * 0.625 / 1e6)
    # Reads: the fetches', and the hourly pace Scan of every source item whole (1,000 x 4 KB
    # eventually consistent = 500 units, and the pace item's half unit).
    assert b["DynamoDB reads"]["list"] == pytest.approx((fetches * 1 + 720 * 500.5) * 0.125 / 1e6)
    assert b["SQS"]["list"] == pytest.approx(3 * POLLS * 0.40 / 1e6 + POLLS * 0.50 / 1e6)
    assert b["SQS"]["free_tier"] == pytest.approx((3 * POLLS - 1e6) * 0.40 / 1e6 + POLLS * 0.50 / 1e6)
    assert b["CloudWatch logs"]["list"] == pytest.approx(
        fetches * 500 / 1e9 * (0.50 + cost.LOG_RETENTION_MONTHS * cost.LOG_COMPRESSION * 0.03))
    assert b["CloudWatch metrics"] == {"list": pytest.approx(3.60), "free_tier": pytest.approx(0.60)}
    assert b["API Gateway"]["list"] == 0 and b["Egress"]["list"] == 0
    lines = [v for k, v in b.items() if k != "Total"]
    assert b["Total"]["list"] == pytest.approx(sum(v["list"] for v in lines))
    assert b["Total"]["free_tier"] == pytest.approx(sum(v["free_tier"] for v in lines))


def test_readers_bring_api_gateway_egress_access_logs_and_counter_flushes():
    quiet = bill(units(), ONLY_304, 1000, 0)
    busy = bill(units(), ONLY_304, 1000, 1000)
    requests = 1000 * 720
    assert busy["API Gateway"]["list"] == pytest.approx(requests * 1.00 / 1e6)
    assert busy["Egress"]["list"] == pytest.approx(
        requests * (1 - cost.READER_NOT_MODIFIED_SHARE) * cost.READER_BODY_BYTES / 1e9 * 0.09)
    assert busy["Egress"]["free_tier"] == 0  # well within the free 100 GB
    flushes = min(requests, cost.MONTH_SECONDS / cost.COUNTER_FLUSH_SECONDS)
    assert busy["DynamoDB writes"]["list"] - quiet["DynamoDB writes"]["list"] == pytest.approx(flushes * 0.625 / 1e6)
    assert busy["CloudWatch logs"]["list"] > quiet["CloudWatch logs"]["list"]


def test_the_idle_month_is_storage_and_the_always_running_tick_and_pollers_without_the_pace_scan():
    b = bill(units(), ONLY_304, 10_000, 1000, idle=True)
    dynamodb_gb, s3_gb = cost.storage_gb(units(), ONLY_304, 10_000)
    assert b["DynamoDB storage"]["list"] == pytest.approx(dynamodb_gb * 0.25) and dynamodb_gb > 0
    assert b["S3 storage"]["list"] == pytest.approx(s3_gb * 0.023)
    # No fetch, no reader: no request line, no egress, no metric reported.
    for name in ("S3 requests", "API Gateway", "Egress", "CloudWatch logs", "CloudWatch metrics", "DynamoDB writes"):
        assert b[name]["list"] == 0, name
    # What still runs: the queues' pollers (and the tick, none here); the pace steps only after a
    # source was leased, so its Scan reads nothing in an idle month.
    assert b["SQS"]["list"] == pytest.approx(3 * POLLS * 0.40 / 1e6 + POLLS * 0.50 / 1e6)
    assert b["DynamoDB reads"]["list"] == 0
    assert bill(units(), ONLY_304, 10_000, 1000)["DynamoDB reads"]["list"] > 0  # active: it Scans hourly


def test_the_proposed_reduction_takes_its_puts_off_the_bill():
    with_new = Population(fetches=10, not_modified=0, with_new=10, new_entries=10, errors=0)
    before = bill(units(), with_new, 1000, 0)
    after = bill(units(), with_new, 1000, 0, Options(puts_saved_new=1.5))
    assert after["S3 requests"]["list"] == pytest.approx(1000 * 10 * 0.5 * 0.005 / 1000)
    assert after["Total"]["list"] < before["Total"]["list"]


def test_duration_scales_cpu_below_a_full_vcpu_only():
    assert cost.duration(0.1, 0.2, 1769) == pytest.approx(0.3)
    assert cost.duration(0.1, 0.2, 3538) == pytest.approx(0.3)
    assert cost.duration(0.1, 0.2, 128) == pytest.approx(0.1 * 1769 / 128 + 0.2)


def test_the_prices_table_is_dated_and_names_its_sources():
    assert re.fullmatch(r"20\d\d-\d\d", cost.PRICES_DATE)
    assert cost.PRICES_REGION == "us-east-1"
    for name, price in cost.PRICES.items():
        assert price.usd > 0, name
        assert re.match(r"https://aws\.amazon\.com/[a-z0-9-]+/pricing/", price.source), name
    assert cost.PRICES["lambda_gb_second_arm64"].usd == pytest.approx(0.0000133334)
    assert cost.PRICES["dynamodb_write_unit"].usd == pytest.approx(5 * cost.PRICES["dynamodb_read_unit"].usd)


@pytest.mark.slow  # moto: not in `make test-fast`
def test_a_write_costs_its_item_and_every_index_entry_it_puts_changes_or_moves():
    import boto3
    from moto import mock_aws

    from starfeed.local.template import REGION

    # Not `with mock_aws()`: it empties moto's backends in this process on entry and exit, and with
    # them the local stack of the integration tests that this worker runs too.
    mocked = mock_aws()
    mocked.start(reset=False)
    try:
        db = boto3.client("dynamodb", region_name=REGION)
        db.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("id", "part", "at")],
                        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                        GlobalSecondaryIndexes=[{"IndexName": "Due", "Projection": {"ProjectionType": "KEYS_ONLY"},
                                                 "KeySchema": [{"AttributeName": "part", "KeyType": "HASH"},
                                                               {"AttributeName": "at", "KeyType": "RANGE"}]}])
        tally = cost.Tally()
        big = "x" * 1500  # the item is 2 KB: 2 units; an index entry of keys only, 1

        def units_of(call, **params):
            before = sum(tally.wru.values())
            with cost.recording(tally):
                getattr(db, call)(TableName="t", **params)
            return sum(tally.wru.values()) - before

        key = {"id": {"S": "a"}}
        assert units_of("put_item", Item={**key, "body": {"S": big}}) == 2  # not in the index
        assert units_of("update_item", Key=key, UpdateExpression="SET part = :s, #at = :d",
                        ExpressionAttributeNames={"#at": "at"},
                        ExpressionAttributeValues={":s": {"S": "0"}, ":d": {"S": "1"}}) == 2 + 1  # put in it
        assert units_of("update_item", Key=key, UpdateExpression="SET body = :b",
                        ExpressionAttributeValues={":b": {"S": big + "y"}}) == 2  # its keys-only entry unchanged
        assert units_of("update_item", Key=key, UpdateExpression="SET #at = :d", ExpressionAttributeNames={"#at": "at"},
                        ExpressionAttributeValues={":d": {"S": "2"}}) == 2 + 2  # moved: a delete and a put
        assert units_of("delete_item", Key=key) == 2 + 1
        db.delete_table(TableName="t")
    finally:
        mocked.stop(remove_data=False)


def test_sightings_are_billed_for_the_parses_that_find_them_due():
    parsed = Population(fetches=10, not_modified=0, with_new=10, new_entries=10, errors=0)  # 10 parses a month
    assert cost.sightings_due_share(parsed, 86400) == 1.0  # parsed every 3 days: due each time
    assert cost.sightings_due_share(parsed, 7 * 86400) == pytest.approx(1 / 3)  # a week: days 0, 9, 18, 27
    assert cost.sightings_due_share(ONLY_304, 86400) == 0.0  # nothing parsed, nothing sighted
    base = units(fetch=Usage())
    weekly = replace(base, per_sighting_round=Usage(wru=150), sighting_refresh=7 * 86400)
    extra = (bill(weekly, parsed, 1000, 0)["DynamoDB writes"]["list"]
             - bill(base, parsed, 1000, 0)["DynamoDB writes"]["list"])
    assert extra == pytest.approx(1000 * 10 * (1 / 3) * 150 * 0.625 / 1e6)
