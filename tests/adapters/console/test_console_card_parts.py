"""A console card keeps its TL;DR and its abstract snippet apart: each under its own label, the
wrapped lines hung under the label's text, so one never runs into the other.

Breaks that turn these red: `render_card` wrapping the snippet straight under the TL;DR with
the same indent and no label (the old rendering); the TL;DR's later lines indented like the
card's other lines (they read as the start of the snippet)."""

from __future__ import annotations

from bot.adapters.console import render_card
from bot.commands.replies import card
from tests.tldr.test_tldr import bundled


def test_the_tldr_and_the_snippet_are_labelled_apart():
    shown_cards = 0
    for p in bundled():
        c = card(p, "matches 'x'", 1, 0.5, feedback=True)
        if not c.snippet:  # the TL;DR was all there was to say
            continue
        shown_cards += 1
        lines = render_card(c).splitlines()
        tldr = next(i for i, line in enumerate(lines) if line.startswith("   TL;DR: "))
        snippet = next(i for i, line in enumerate(lines) if line.startswith("   abstract: "))
        assert tldr < snippet
        # Every line between them continues the TL;DR, aligned under its text.
        assert all(line.startswith(" " * 10) for line in lines[tldr + 1 : snippet])
        shown = " ".join(x.strip() for x in lines[tldr:snippet])
        assert shown == f"TL;DR: {c.tldr}"
        end = next(i for i, line in enumerate(lines) if line.startswith("   why: "))
        assert all(line.startswith(" " * 13) for line in lines[snippet + 1 : end])
        assert " ".join(x.strip() for x in lines[snippet:end]) == f"abstract: {c.snippet}"
    assert shown_cards >= 15
