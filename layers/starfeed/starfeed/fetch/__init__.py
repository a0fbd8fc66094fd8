"""Fetching a source over HTTP, politely and within limits."""
