"""Read template.yaml and create its tables, buckets, queues and event buses on an AWS endpoint (moto)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REGION = "us-east-1"
ACCOUNT = "123456789012"


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags (!Ref, !GetAtt, !Sub, ...) as their long forms."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node):
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {name: value}


_CfnLoader.add_multi_constructor("!", _tag)


def load(path: Path) -> dict:
    return yaml.load(path.read_text(), Loader=_CfnLoader)


@dataclass
class Stack:
    """The template's resources as created locally, with what !Ref and !GetAtt resolve to."""

    template: dict
    parameters: dict[str, str]
    refs: dict[str, str] = field(default_factory=dict)
    attributes: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def resources(self) -> dict:
        return self.template["Resources"]

    def of_type(self, kind: str) -> dict[str, dict]:
        return {name: r for name, r in self.resources.items() if r["Type"] == kind}

    def resolve(self, value):
        if isinstance(value, dict) and len(value) == 1:
            (key, arg), = value.items()
            if key == "Ref":  # a parameter may be empty: "" is its value
                return self.parameters[arg] if arg in self.parameters else self.refs.get(arg) or _PSEUDO.get(arg, arg)
            if key == "Fn::GetAtt":
                return self.attributes[tuple(arg)]
            if key == "Fn::Sub":
                return re.sub(r"\$\{([^}]+)\}", lambda m: str(self.resolve({"Ref": m.group(1)})), arg)
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value

    def function_environment(self, logical_id: str) -> dict[str, str]:
        """The environment Lambda would give this function: Globals, then its own variables."""
        variables = dict(self.template.get("Globals", {}).get("Function", {})
                         .get("Environment", {}).get("Variables", {}))
        function = self.resources[logical_id]["Properties"]
        variables.update(function.get("Environment", {}).get("Variables", {}))
        return {k: str(self.resolve(v)) for k, v in variables.items()}


_PSEUDO = {"AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::URLSuffix": "amazonaws.com",
           "AWS::StackName": "starfeed-local"}


def create(template: dict, session, overrides: dict[str, str] | None = None) -> Stack:
    parameters = {name: str(p.get("Default", "")) for name, p in template.get("Parameters", {}).items()}
    parameters.update(overrides or {})
    stack = Stack(template, parameters)
    dynamodb, s3, sqs = (session.client(s) for s in ("dynamodb", "s3", "sqs"))
    for name, resource in stack.of_type("AWS::DynamoDB::Table").items():
        _create_table(stack, dynamodb, name, stack.resolve(resource["Properties"]))
    for name, resource in stack.of_type("AWS::S3::Bucket").items():
        _create_bucket(stack, s3, name, stack.resolve(resource["Properties"]))
    # Queues without a redrive policy first: the others point at them.
    queues = sorted(stack.of_type("AWS::SQS::Queue").items(),
                    key=lambda item: "RedrivePolicy" in item[1].get("Properties", {}))
    for name, resource in queues:
        _create_queue(stack, sqs, name, stack.resolve(resource.get("Properties", {})))
    events = session.client("events")
    for name, resource in stack.of_type("AWS::Events::EventBus").items():
        bus = stack.resolve(resource["Properties"])["Name"]
        events.create_event_bus(Name=bus)
        stack.refs[name] = bus
        stack.attributes[(name, "Arn")] = f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{bus}"
        stack.attributes[(name, "Name")] = bus
    for name in stack.of_type("AWS::Serverless::HttpApi"):
        stack.refs[name] = "local"
    return stack


def _physical_name(logical_id: str) -> str:
    return "starfeed-" + re.sub(r"(?<!^)(?=[A-Z])", "-", logical_id).lower()


def _create_table(stack: Stack, dynamodb, logical_id: str, props: dict) -> None:
    name = _physical_name(logical_id)
    kwargs = {k: props[k] for k in ("AttributeDefinitions", "KeySchema", "BillingMode",
                                     "GlobalSecondaryIndexes", "LocalSecondaryIndexes") if k in props}
    dynamodb.create_table(TableName=name, **kwargs)
    if "TimeToLiveSpecification" in props:
        dynamodb.update_time_to_live(TableName=name,
                                     TimeToLiveSpecification=props["TimeToLiveSpecification"])
    if "PointInTimeRecoverySpecification" in props:
        dynamodb.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": bool(
                props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"])})
    stack.refs[logical_id] = name
    stack.attributes[(logical_id, "Arn")] = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


def _create_bucket(stack: Stack, s3, logical_id: str, props: dict) -> None:
    name = _physical_name(logical_id)
    s3.create_bucket(Bucket=name)
    if "PublicAccessBlockConfiguration" in props:
        s3.put_public_access_block(Bucket=name, PublicAccessBlockConfiguration=props[
            "PublicAccessBlockConfiguration"])
    if "BucketEncryption" in props:
        rules = [{"ApplyServerSideEncryptionByDefault": r["ServerSideEncryptionByDefault"]}
                 for r in props["BucketEncryption"]["ServerSideEncryptionConfiguration"]]
        s3.put_bucket_encryption(Bucket=name, ServerSideEncryptionConfiguration={"Rules": rules})
    if "OwnershipControls" in props:
        s3.put_bucket_ownership_controls(Bucket=name, OwnershipControls=props["OwnershipControls"])
    if "LifecycleConfiguration" in props:
        rules = [{"ID": r["Id"], "Status": r["Status"], "Filter": {"Prefix": r.get("Prefix", "")},
                  "Expiration": {"Days": int(r["ExpirationInDays"])}}
                 for r in props["LifecycleConfiguration"]["Rules"]]
        s3.put_bucket_lifecycle_configuration(Bucket=name, LifecycleConfiguration={"Rules": rules})
    stack.refs[logical_id] = name
    stack.attributes[(logical_id, "Arn")] = f"arn:aws:s3:::{name}"


def _create_queue(stack: Stack, sqs, logical_id: str, props: dict) -> None:
    fifo = bool(props.get("FifoQueue"))
    name = _physical_name(logical_id) + (".fifo" if fifo else "")
    attributes = {}
    for key in ("VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds",
                "ContentBasedDeduplication", "FifoQueue"):
        if key in props:
            value = props[key]
            attributes[key] = str(value).lower() if isinstance(value, bool) else str(value)
    if "RedrivePolicy" in props:
        attributes["RedrivePolicy"] = json.dumps(props["RedrivePolicy"])
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    stack.refs[logical_id] = url
    stack.attributes[(logical_id, "Arn")] = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"
    stack.attributes[(logical_id, "QueueName")] = name
