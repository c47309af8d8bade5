"""Ingest: fetching (``fetch``) is kept apart from pure parsing (``parse``, ``feeds``)."""

from dataclasses import dataclass

__all__ = ["FEED_HINT", "SourceConfig"]

#: The next step once the bundled papers are used up (the demo runs dry on its third day).
FEED_HINT = (
    "To get more, whoever runs digestbot adds a feed: "
    "`DIGESTBOT_ARXIV_QUERIES='[\"cat:cs.LG\"]'` (fetched every 6 hours), "
    "or once: `digestbot ingest arxiv:cat:cs.LG`."
)


# Here, not in pipeline.py: the composition root builds it for every command, and the pipeline
# loads the HTTP client and the feed parser, which only an ingest needs.
@dataclass(frozen=True)
class SourceConfig:
    """Where network sources live (configurable so tests can point at a local server)."""

    arxiv_base_url: str = "https://export.arxiv.org/api/query"
    arxiv_rss_url: str = "https://rss.arxiv.org/rss"
    openreview_base_url: str = "https://api2.openreview.net"
    min_interval: float = 3.0
    arxiv_max_results: int = 200
