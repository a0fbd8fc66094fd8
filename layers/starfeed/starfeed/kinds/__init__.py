"""Source kinds: each kind of source (a feed, a web page, a GitHub account, ...) is one module
here behind one small interface, kinds.base.SourceKind: how it is fetched, parsed and decided,
what it renders, how it is listed. kinds.registry names them all; outside this package no code
asks which kind a source is, it asks its kind (`kind_of(source)`).

Adding a kind: one module here, its line in registry.KINDS, its tests and its README section."""
