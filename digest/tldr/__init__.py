"""TL;DR lines: extractive by default, abstractive from a configured model."""
