"""Where a deployed stack keeps its resources: CloudFormation's outputs, by name."""

from __future__ import annotations

import boto3


def stack_outputs(stack_name: str) -> dict[str, str]:
    """OutputKey -> OutputValue of a deployed stack (credentials and region from the environment)."""
    stack = boto3.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
