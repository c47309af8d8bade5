"""Ranking: a channel profile scored against the papers (lexical, semantic, feedback, diversity)."""
