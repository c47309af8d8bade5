"""The reading group: a channel's weekly meeting, the poll that picks its paper, the pick's
announcement, thread, reminder and recap (each a delivery of the one ledger), its history.

Platform-free: `schedule` (the weekly timeline in the channel's zone, pure), `service`
(ReadingGroups: the use cases, returning data the chat side words)."""
