"""The api function's routes, one Powertools Router per concern (serve/api.py assembles them)."""
