"""BibTeX entries for papers (what reading groups paste into their reference managers). No I/O."""

from __future__ import annotations

import re

from digest.models import Paper

_SPECIAL = str.maketrans({c: f"\\{c}" for c in "&%$#_{}"})


def _escape(text: str) -> str:
    return text.translate(_SPECIAL).replace("~", r"\~{}").replace("^", r"\^{}")


def cite_key(p: Paper) -> str:
    """``lastnameYEARfirstword``, ASCII only, e.g. ``lovelace2026sparse``."""
    last = (
        re.sub(r"[^a-z]", "", (p.authors[0].split()[-1] if p.authors else "anon").lower()) or "anon"
    )
    word = next((w for w in re.findall(r"[a-z]+", p.title.lower()) if len(w) > 3), "paper")
    return f"{last}{p.year or ''}{word}"


def entry(p: Paper) -> str:
    """One @article/@inproceedings entry."""
    kind = "inproceedings" if p.venue else "article"
    fields = {
        "title": "{" + _escape(p.title) + "}",
        "author": " and ".join(_escape(a) for a in p.authors) or None,
        "year": str(p.year) if p.year else None,
        ("booktitle" if p.venue else "journal"): _escape(p.venue or "arXiv preprint"),
        "url": p.links.abs or p.links.forum or p.links.pdf,
        "note": f"digestbot id {p.id}"
        + (" (title derived from the abstract)" if p.title_derived else ""),
    }
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields.items() if v)
    return f"@{kind}{{{cite_key(p)},\n{body}\n}}"


def export(papers: list[Paper]) -> str:
    """A .bib file's text, cite keys made unique."""
    seen: dict[str, int] = {}
    out = []
    for p in papers:
        text = entry(p)
        key = cite_key(p)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            text = text.replace(f"{{{key},", f"{{{key}{chr(96 + seen[key])},", 1)
        out.append(text)
    return "\n\n".join(out) + ("\n" if out else "")
