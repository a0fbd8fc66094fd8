"""WebSub (W3C Recommendation): starfeed as a subscriber (a source whose feed announces a hub is
pushed its updates, and polled daily as a safety check) and as a publisher (the hub our own feeds
announce is told when they change)."""
