"""Rendering stored entries as RSS 2.0, Atom, JSON Feed 1.1 and an HTML index. Pure."""
