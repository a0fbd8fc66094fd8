"""Serving readers: negotiation (pure) and the API function's routes."""
