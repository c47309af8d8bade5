"""A channel's own state: finding it, what it follows, its settings, colleagues' votes."""
