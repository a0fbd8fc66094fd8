"""Rules: what a person says of the entries sources bring (docs/design.md#rules). grammar.py
checks a rule as written and turns its patterns into RE2; judge.py gives an entry its verdict.
Both are pure: the jobs read the rules from storage and write the verdicts."""
