"""WebSub (W3C Recommendation): starfeed as a publisher, telling the hub its feeds announce when
they change."""
