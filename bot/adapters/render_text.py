"""Plain-text rendering of papers for the CLI and the console adapter."""

from __future__ import annotations

import textwrap

from digest.models import Paper
from digest.text.links import is_http
from digest.tldr.extractive import tldr_line


def labelled(label: str, text: str, indent: str = "   ", width: int = 100) -> list[str]:
    """``text`` wrapped after ``label: ``, its later lines aligned under the text's first word."""
    hang = indent + " " * (len(label) + 2)
    return textwrap.wrap(f"{label}: {text}", width, initial_indent=indent, subsequent_indent=hang)


def paper_line(p: Paper) -> str:
    """One line: id, title, venue."""
    venue = f" ({p.venue})" if p.venue else ""
    return f"{p.id}  {p.title}{venue}"


def links_line(p: Paper) -> str:
    """The paper's links, labelled, on one line."""
    named = [
        ("pdf", p.links.pdf),
        ("arXiv", p.links.abs),
        ("OpenReview", p.links.forum),
        ("code", p.links.code),
    ]
    return " · ".join(f"{name}: {url}" for name, url in named if is_http(url))


def paper_detail(p: Paper, width: int = 100) -> str:
    """Title, metadata, links, the TL;DR and the clean abstract."""
    lines = [p.title + ("  (title derived from the abstract)" if p.title_derived else "")]
    meta = [
        p.id,
        p.venue or "",
        ", ".join(p.authors[:8]) + (" et al." if len(p.authors) > 8 else ""),
    ]
    lines.append(" · ".join(m for m in meta if m))
    if p.keywords:
        lines.append("keywords: " + ", ".join(p.keywords))
    if links := links_line(p):
        lines.append(links)
    if tldr := tldr_line(p):
        lines += [""] + textwrap.wrap(f"TL;DR: {tldr}", width)
    lines.append("")
    lines.extend(textwrap.wrap(p.abstract, width) or ["(no abstract)"])
    return "\n".join(lines)
