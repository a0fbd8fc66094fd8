"""Deciding when each source is fetched next (pure) and finding the sources that are due."""
