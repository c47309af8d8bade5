"""Ingest: fetching (``fetch``) is kept apart from pure parsing (``parse``, ``feeds``)."""

#: The next step once the bundled papers are used up (the demo runs dry on its third day).
FEED_HINT = (
    "To get more, whoever runs digestbot adds a feed: "
    "`DIGESTBOT_ARXIV_QUERIES='[\"cat:cs.LG\"]'` (fetched every 6 hours), "
    "or once: `digestbot ingest arxiv:cat:cs.LG`."
)
