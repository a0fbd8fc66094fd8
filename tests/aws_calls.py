"""What each function's code asks of AWS, as IAM grants: (function, action, resource, suffix).

Every botocore call made while a function's handler runs (runtime.CURRENT_FUNCTION) is recorded
and turned into the IAM actions and resources it needs; resources are named by the template's
logical ids, with the suffix an ARN needs (an index, a bucket's objects)."""

from __future__ import annotations

from contextlib import contextmanager

from starfeed.local.aws_calls import observed
from starfeed.local.runtime import CURRENT_FUNCTION

# A DynamoDB transaction is authorized per item, by the action each item performs.
_TRANSACT = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}
_S3 = {"HeadObject": "GetObject", "ListObjectsV2": "ListBucket", "DeleteObjects": "DeleteObject"}
_SQS = {"SendMessageBatch": "SendMessage", "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
        "DeleteMessageBatch": "DeleteMessage"}


def grants_for(service: str, operation: str, params: dict, logical: dict[str, str]) -> set[tuple[str, str, str]]:
    """(action, logical id, suffix) that one call needs; logical maps physical names to ids."""
    if service == "dynamodb":
        if operation == "TransactWriteItems":
            return {(f"dynamodb:{_TRANSACT[kind]}", logical[body["TableName"]], "")
                    for item in params["TransactItems"] for kind, body in item.items()}
        tables = params.get("RequestItems") or {params.get("TableName"): None}
        index = f"index/{params['IndexName']}" if params.get("IndexName") else ""
        return {(f"dynamodb:{operation}", logical[table], index) for table in tables}
    if service == "s3":
        action = _S3.get(operation, operation)
        return {(f"s3:{action}", logical[params["Bucket"]], "" if action == "ListBucket" else "/*")}
    if service == "sqs":
        return {(f"sqs:{_SQS.get(operation, operation)}", logical[params["QueueUrl"]], "")}
    if service == "ssm":
        return {(f"ssm:{operation}", *_secret(params["Name"]))}
    if service == "events":
        return {(f"events:{operation}", logical[e["EventBusName"]], "") for e in params["Entries"]}
    if service == "bedrock-runtime":  # Converse is authorized as InvokeModel on the model
        return {("bedrock:InvokeModel", "BedrockModelId", "")}
    if service == "secretsmanager":
        return {(f"secretsmanager:{operation}", *_secret(params["SecretId"]))}
    return {(f"{service}:{operation}", "*", "")}


def _secret(name: str) -> tuple[str, str]:
    """The template parameter naming a token store entry, and the suffix a grant names: a source's
    request options live under SourceSecretsPath (its default, starfeed/source-options), the
    proxy's login there as /proxy, the GitHub token elsewhere."""
    if name.lstrip("/") == "starfeed/source-options/proxy":
        return "SourceSecretsPath", "/proxy"
    return ("SourceSecretsPath" if name.lstrip("/").startswith("starfeed/source-options/") else "GitHubTokenName"), ""


@contextmanager
def recording(stack):
    """Yields the set of (function, action, resource, suffix) the functions' calls needed."""
    logical = {physical: name for name, physical in stack.stack.refs.items()}
    used: set[tuple[str, str, str, str]] = set()

    def record(service, operation, params):
        function = CURRENT_FUNCTION.get()
        if function is not None:
            used.update((function, *grant) for grant in grants_for(service, operation, params, logical))

    with observed(record):
        yield used
