"""DynamoDB's limits (developer guide, "Service, account, and table quotas"), in a module of their
own so that code checking a URL against them does not load PynamoDB."""

ITEM_BYTES = 400 * 1024  # an item
SORT_KEY_BYTES = 1024  # entry_uid, and sort_key = "<time>#<entry_uid>"
PARTITION_KEY_BYTES = 2048  # canonical_link in the ByLink index and url in ByUrl included
