"""Ingest: fetching (``fetch``) is kept apart from pure parsing (``parse``, ``feeds``)."""
