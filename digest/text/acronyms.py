"""Acronyms and the words that spell them (Schwartz-Hearst)."""

from __future__ import annotations


def acronym_span(acronym: str, words: list[str]) -> int:
    """Schwartz-Hearst: how many trailing ``words`` spell ``acronym``; 0 if they do not."""
    letters = [c.lower() for c in acronym if c.isalnum()]
    text = " ".join(words)
    if text.isascii() and acronym.isascii():  # the common case, by C string search
        return _ascii_span(letters, text.lower())
    li, ti = len(letters) - 1, len(text) - 1
    while li >= 0:
        while ti >= 0 and (
            text[ti].lower() != letters[li] or (li == 0 and ti > 0 and text[ti - 1].isalnum())
        ):
            ti -= 1
        if ti < 0:
            return 0
        li, ti = li - 1, ti - 1
    return _span_length(text[ti + 1 :].split(), letters)


def _ascii_span(letters: list[str], text: str) -> int:
    """``acronym_span`` on lower-case ASCII text: each letter found by ``rfind``, not char by char."""
    ti = len(text) - 1
    for li in range(len(letters) - 1, -1, -1):
        ti = text.rfind(letters[li], 0, ti + 1)
        while li == 0 and ti > 0 and text[ti - 1].isalnum():  # the first letter starts a word
            ti = text.rfind(letters[0], 0, ti)
        if ti < 0:
            return 0
        ti -= 1
    return _span_length(text[ti + 1 :].split(), letters)


def _span_length(used: list[str], letters: list[str]) -> int:
    """Words of the span, 0 unless it starts with the first letter and is not too long."""
    first = used[0] if used else ""
    if not first or first[0].lower() != letters[0]:
        return 0
    return len(used) if len(used) <= len(letters) + 5 else 0
