"""User-facing errors: each carries one short line that a CLI or chat reply can show as is."""


class DigestError(Exception):
    """A problem caused by input or environment, reported to the user without a traceback."""


class NotFoundError(DigestError):
    """A paper, channel or subscription that does not exist."""


class IngestError(DigestError):
    """A source that cannot be read or parsed at all."""


class StoreUnavailableError(DigestError):
    """The database cannot be reached or opened."""
