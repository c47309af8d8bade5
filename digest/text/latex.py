"""LaTeX and Markdown in titles and abstracts to plain, single-spaced text, cut at a sane length."""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import TYPE_CHECKING

# The converter loads with the first abstract holding LaTeX (an ingest), not with every command.
if TYPE_CHECKING:
    from pylatexenc.latex2text import LatexNodes2Text

# Its warnings about odd macros in abstracts are noise to users; we fall back to the raw span.
logging.getLogger("pylatexenc").setLevel(logging.ERROR)

#: Abstracts longer than this are cut (a 10 MB "abstract" is a broken record, not a paper).
MAX_ABSTRACT_CHARS = 20_000

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MD_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.S)
_MD_EM = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_MD_CODE = re.compile(r"`([^`\n]+)`")
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _latex() -> LatexNodes2Text:
    """A converter that keeps unknown macro names (``\\method`` -> ``method``) instead of dropping them."""
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

    db = get_default_latex_context_db()
    keep = [
        MacroTextSpec(m, simplify_repl="%(1)s") for m in ("texttt", "mathrm", "textsc", "mathbf")
    ]
    db.add_context_category("digestbot", prepend=True, macros=keep)
    db.set_unknown_macro_spec(MacroTextSpec("", simplify_repl=lambda n, l2tobj=None: n.macroname))
    return LatexNodes2Text(latex_context=db, math_mode="text", strict_latex_spaces=True)


def _protect_plain_symbols(text: str) -> str:
    """Escape characters that LaTeX would eat but abstracts use literally (50%, a lone $5)."""
    text = re.sub(r"(?<!\\)%", r"\\%", text)
    if text.count("$") % 2:  # an unpaired dollar is money, not math
        text = re.sub(r"(?<!\\)\$", r"\\$", text)
    return text


# LaTeX spans: inline math, a macro with its braced arguments, dash ligatures, bare braces.
_LATEX_SPAN = re.compile(
    r"\$[^$]{1,400}\$"
    r"|\\[a-zA-Z]+\*?(?:\s*\{(?:[^{}]|\{[^{}]*\})*\})*"
    r"|\\[^a-zA-Z\s]"
    r"|(?<=\w)-{2,3}(?=\w)"
    r"|\{(?:[^{}]|\{[^{}]*\})*\}"
)


@lru_cache(maxsize=20_000)
def _latex_span(span: str) -> str:
    """One LaTeX span as text; the converter only ever sees the span, never the whole abstract."""
    try:
        return _latex().latex_to_text(_protect_plain_symbols(span))
    except Exception:  # noqa: BLE001 - a converter failure must never lose the record
        return span.replace("\\", " ")


def clean_text(raw: str) -> str:
    """Plain, single-spaced text from an abstract or title carrying LaTeX and Markdown."""
    return clean_text_cut(raw)[0]


def clean_text_cut(raw: str) -> tuple[str, bool]:
    """``clean_text`` and whether it was cut to ``MAX_ABSTRACT_CHARS`` (ingest warns then)."""
    cut = len(raw) > MAX_ABSTRACT_CHARS * 2  # the tail goes before cleaning (it is slow)
    text = _CONTROL.sub(" ", raw[: MAX_ABSTRACT_CHARS * 2])
    text = _MD_CODE.sub(r"\1", text)
    text = _MD_BOLD.sub(r"\2", text)
    text = _MD_EM.sub(r"\1", text)
    if text.count("$") % 2:  # an unpaired dollar is money, not math
        text = text.replace("$", "\\$")
    text = _LATEX_SPAN.sub(lambda m: _latex_span(m.group(0)), text)
    text = _SPACES.sub(" ", text).strip()
    if len(text) <= MAX_ABSTRACT_CHARS:
        return text, cut
    return text[:MAX_ABSTRACT_CHARS].rsplit(" ", 1)[0] + " …", True
