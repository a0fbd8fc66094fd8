"""template.yaml holds what an operator needs in production."""

from pathlib import Path

import pytest

from starfeed.local.template import load

ROOT = Path(__file__).resolve().parents[2]
T = load(ROOT / "template.yaml")
R = T["Resources"]


def of_type(kind):
    return {k: v["Properties"] for k, v in R.items() if v["Type"] == kind}


def test_tables_are_on_demand_with_point_in_time_recovery():
    tables = of_type("AWS::DynamoDB::Table")
    assert set(tables) == {"SourcesTable", "EntriesTable", "CollectionsTable", "CollectionEntriesTable",
                           "StatsTable", "HostsTable"}
    for props in tables.values():
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    for expiring in ("EntriesTable", "CollectionEntriesTable"):  # a copy leaves with its entry
        assert tables[expiring]["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}


def test_the_scheduler_index_is_sharded_and_sorted_by_next_check():
    due = next(i for i in of_type("AWS::DynamoDB::Table")["SourcesTable"]["GlobalSecondaryIndexes"]
               if i["IndexName"] == "Due")
    assert [k["AttributeName"] for k in due["KeySchema"]] == ["due_shard", "next_check_at"]


def test_buckets_block_public_access_and_raw_payloads_expire():
    buckets = of_type("AWS::S3::Bucket")
    for props in buckets.values():
        assert all(props["PublicAccessBlockConfiguration"].values())
    rule = buckets["RawBucket"]["LifecycleConfiguration"]["Rules"][0]
    assert rule["ExpirationInDays"] == {"Ref": "RawRetentionDays"}
    assert T["Parameters"]["RawRetentionDays"]["Default"] == 30


def test_fetch_queue_is_fifo_with_a_dead_letter_queue_and_six_times_the_timeout():
    queue = of_type("AWS::SQS::Queue")["FetchQueue"]
    fetcher = R["FetcherFunction"]["Properties"]
    assert queue["FifoQueue"] is True
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": ["FetchDeadLetterQueue", "Arn"]}
    assert queue["VisibilityTimeout"] >= 6 * fetcher["Timeout"]
    render_queue = of_type("AWS::SQS::Queue")["RenderQueue"]
    assert render_queue["VisibilityTimeout"] >= 6 * R["RendererFunction"]["Properties"]["Timeout"]


@pytest.mark.parametrize("function", ["FetcherFunction", "RendererFunction"])
def test_queue_consumers_report_partial_batch_failures(function):
    event = next(iter(R[function]["Properties"]["Events"].values()))
    assert event["Type"] == "SQS"
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_scheduler_runs_on_a_schedule_v2_at_a_parameter_rate():
    tick = R["SchedulerFunction"]["Properties"]["Events"]["Tick"]
    assert tick["Type"] == "ScheduleV2"
    assert tick["Properties"]["ScheduleExpression"] == {"Ref": "ScheduleRate"}


def test_functions_run_python_3_13_on_arm64_with_code_only():
    glob = T["Globals"]["Function"]
    assert (glob["Runtime"], glob["Architectures"]) == ("python3.13", ["arm64"])
    assert glob["Layers"] == [{"Ref": "StarfeedLayer"}]
    for name in ("scheduler", "fetcher", "renderer", "api"):
        files = {p.name for p in (ROOT / "functions" / name).iterdir() if p.suffix == ".py"}
        assert files == {"app.py"}, name
        assert not (ROOT / "functions" / name / "requirements.txt").exists()
    assert R["StarfeedLayer"]["Metadata"]["BuildMethod"] == "makefile"


def test_every_function_has_inline_statements_without_wildcards_and_no_vpc():
    """Named actions on named resources only (tests/integration/test_iam.py holds them to the code)."""
    for name, props in of_type("AWS::Serverless::Function").items():
        assert "VpcConfig" not in props, name
        for policy in props["Policies"]:
            branches = policy["Fn::If"][1:] if "Fn::If" in policy else [policy]
            for statement in (s for branch in branches for s in branch["Statement"]):
                actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                assert statement["Effect"] == "Allow" and statement["Sid"], name
                assert all("*" not in action for action in actions), (name, statement["Sid"])
                assert statement["Resource"] != "*", (name, statement["Sid"])


def test_the_public_api_is_throttled_and_access_logged():
    api = R["HttpApi"]["Properties"]
    assert api["DefaultRouteSettings"] == {"ThrottlingRateLimit": {"Ref": "ApiRateLimit"},
                                           "ThrottlingBurstLimit": {"Ref": "ApiBurstLimit"}}
    assert api["AccessLogSettings"]["DestinationArn"] == {"Fn::GetAtt": ["ApiAccessLogs", "Arn"]}


def test_every_checkov_skip_says_why():
    for name, resource in R.items():
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", []):
            assert skip["id"].startswith("CKV_") and len(skip["comment"]) > 40, (name, skip)


def test_outputs_and_parameters_an_operator_needs():
    assert {"ApiUrl", "FeedUrl", "FeedsBucketName", "RawBucketName", "SourcesTableName",
            "EntriesTableName"} <= set(T["Outputs"])
    assert {"ScheduleRate", "LogLevel"} <= set(T["Parameters"])


def test_direct_s3_delivery_is_optional_and_the_bucket_stays_private():
    assert T["Parameters"]["EnableCdn"]["Default"] == "false"
    for name in ("FeedsOriginAccessControl", "FeedsDistribution", "FeedsBucketPolicy"):
        assert R[name]["Condition"] == "CdnEnabled", name
    origin = R["FeedsDistribution"]["Properties"]["DistributionConfig"]["Origins"][0]
    assert origin["OriginAccessControlId"] == {"Fn::GetAtt": ["FeedsOriginAccessControl", "Id"]}
    statement = R["FeedsBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    assert statement["Principal"] == {"Service": "cloudfront.amazonaws.com"}
    assert "AWS:SourceArn" in statement["Condition"]["StringEquals"]
    assert all(R["FeedsBucket"]["Properties"]["PublicAccessBlockConfiguration"].values())


def test_the_api_is_read_only():
    for event in R["ApiFunction"]["Properties"]["Events"].values():
        assert event["Type"] == "HttpApi" and event["Properties"]["Method"] == "GET"


def _names(node) -> set[str]:
    """Every resource a template value names: Ref, Fn::GetAtt and ${…} in Fn::Sub."""
    import re

    if isinstance(node, dict):
        found = set()
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                found.add(value)
            elif key == "Fn::GetAtt":
                found.add((value[0] if isinstance(value, list) else value).split(".")[0])
            elif key == "Fn::Sub":
                text = value if isinstance(value, str) else value[0]
                found |= {name.split(".")[0] for name in re.findall(r"\$\{([^}!]+)\}", text)}
            else:
                found |= _names(value)
        return found
    if isinstance(node, list):
        return set().union(*(_names(item) for item in node)) if node else set()
    return set()


def test_no_function_the_http_api_routes_to_names_that_api():
    """SAM's HttpApi names its routes' functions in its definition: a routed function naming the
    API (its URL in an environment variable, say) is a circular dependency, and the deploy fails."""
    for name, resource in R.items():
        is_function = resource["Type"] == "AWS::Serverless::Function"
        events = (resource["Properties"].get("Events") or {}).values() if is_function else []
        apis = {e["Properties"]["ApiId"]["Ref"] for e in events if e["Type"] == "HttpApi"}
        named = _names({k: v for k, v in resource["Properties"].items() if k != "Events"})
        assert not apis & named, f"{name} is routed by {apis} and names it"
