"""Deframing (docs/design.md#deframing): a new entry of a source with `deframe` on is analyzed after it is stored.

analysis.py holds the AnalyzerResult and what an analyzer is given; mock.py and bedrock.py are the
two analyzers (STARFEED_ANALYZER); present.py shows results in feeds; job.py is the enricher's
work for one entry (download, extract, analyze, store, render request)."""
