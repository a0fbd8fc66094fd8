"""A source's entry digest as stored: one item of the entries table under the source's feed_id,
with the reserved entry_uid below (model.Digest is its form; parse/digest.py says what it holds
and when it is rewritten). It has no expiry: gone, it would make the entries past their retention
that a quiet feed still carries come back as new. `source purge` deletes it with the entries."""

# Its entry_uid: normalization strips the character (XML cannot carry it), so no parsed entry has
# it, and records.entry_problem refuses one that would.
DIGEST_UID = "\x01digest"
