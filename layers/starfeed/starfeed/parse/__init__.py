"""Turning fetched bytes into normalized entries. Pure: no I/O."""
