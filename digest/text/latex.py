"""LaTeX and Markdown in titles and abstracts to plain, single-spaced text, cut at a sane length."""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import TYPE_CHECKING

# The converter loads with the first abstract holding LaTeX (an ingest), not with every command.
if TYPE_CHECKING:
    from pylatexenc.latex2text import LatexNodes2Text
    from pylatexenc.macrospec import LatexContextDb

# Its warnings about odd macros in abstracts are noise to users; we fall back to the raw span.
logging.getLogger("pylatexenc").setLevel(logging.ERROR)

#: Abstracts longer than this are cut (a 10 MB "abstract" is a broken record, not a paper).
MAX_ABSTRACT_CHARS = 20_000

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MD_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.S)
_MD_EM = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_MD_CODE = re.compile(r"`([^`\n]+)`")
_SPACES = re.compile(r"\s+")


#: A span that converts to nothing (a citation, a footnote) leaves this mark, so the space
#: before it can go too ("as shown \\cite{x}." -> "as shown.", not "as shown ."). _CONTROL
#: has already removed every such character from the input, so the mark cannot clash.
_GONE = "\x00"
_GONE_PARENS = re.compile(r"\(\s*\x00[\s\x00]*\)")  # "(\\citet{y})" -> "()" -> gone too
_GONE_GAP = re.compile(r"\s*\x00[\s\x00]*(?=[.,;:!?)\]]|$)")

# Citations and cross-references say nothing in a one-line summary ("<cit.>", "(<ref>)" by
# default); a footnote is an aside whose own sentences would be split out of the abstract.
_DROPPED = (
    "cite",
    "citet",
    "citep",
    "citealt",
    "citealp",
    "citeauthor",
    "citeyear",
    "nocite",
    "ref",
    "autoref",
    "cref",
    "Cref",
    "eqref",
    "pageref",
    "label",
    "footnote",
    "thanks",
    "footnotetext",
)


@lru_cache(maxsize=1)
def _latex() -> tuple[LatexNodes2Text, LatexContextDb]:
    """A converter that keeps unknown macro names (``\\method`` -> ``method``) instead of dropping
    them and drops citations, references and footnotes, with the parser context that knows
    ``\\href``'s two arguments (pylatexenc's default parser does not)."""
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
    from pylatexenc.latexwalker import get_default_latex_context_db as walker_db
    from pylatexenc.macrospec import std_macro

    db = get_default_latex_context_db()
    keep = [
        MacroTextSpec(m, simplify_repl="%(1)s") for m in ("texttt", "mathrm", "textsc", "mathbf")
    ]
    dropped = [MacroTextSpec(m, simplify_repl=_GONE) for m in _DROPPED]
    links = [
        MacroTextSpec("href", simplify_repl="%(2)s"),
        MacroTextSpec("url", simplify_repl="%(1)s"),
    ]
    db.add_context_category("digestbot", prepend=True, macros=keep + dropped + links)
    db.set_unknown_macro_spec(MacroTextSpec("", simplify_repl=lambda n, l2tobj=None: n.macroname))
    parse = walker_db()
    parse.add_context_category(
        "digestbot",
        prepend=True,
        macros=[
            std_macro("href", False, 2),
            std_macro("thanks", False, 1),
            std_macro("footnotetext", True, 1),
            std_macro("nocite", False, 1),
        ],
    )
    converter = LatexNodes2Text(latex_context=db, math_mode="text", strict_latex_spaces=True)
    return converter, parse


def _protect_plain_symbols(text: str) -> str:
    """Escape characters that LaTeX would eat but abstracts use literally (50%, a lone $5)."""
    text = re.sub(r"(?<!\\)%", r"\\%", text)
    if text.count("$") % 2:  # an unpaired dollar is money, not math
        text = re.sub(r"(?<!\\)\$", r"\\$", text)
    return text


# LaTeX spans: inline math, a macro with its braced (and [optional]) arguments, "~", dash
# ligatures, bare braces.
_LATEX_SPAN = re.compile(
    r"\$[^$]{1,400}\$"
    r"|\\[a-zA-Z]+\*?(?:\s*\{(?:[^{}]|\{[^{}]*\})*\}|\[[^\[\]{}$]{0,80}\])*"
    r"|\\[^a-zA-Z\s]"
    # A spaced "--" stays: plain-text abstracts use it as ASCII punctuation (and SQL comments).
    r"|(?<=\w)-{2,3}(?=\w)|(?<=\s)---(?=\s)"
    r"|(?<=[\w.,;:)])~(?=[\w\\$(])"  # a non-breaking space ("Smith~et al.", "Eq.~\\eqref")
    r"|\{(?:[^{}]|\{[^{}]*\})*\}"
)


@lru_cache(maxsize=20_000)
def _latex_span(span: str) -> str:
    """One LaTeX span as text; the converter only ever sees the span, never the whole abstract."""
    try:
        from pylatexenc.latexwalker import LatexWalker

        converter, parse = _latex()
        nodes = LatexWalker(_protect_plain_symbols(span), latex_context=parse).get_latex_nodes()[0]
        return converter.nodelist_to_text(nodes)
    except Exception:  # noqa: BLE001 - a converter failure must never lose the record
        return span.replace("\\", " ")


# HTML from JSON exports (<p>, <i>, <br/>): only what looks like a tag goes, so "p < 0.05" and
# "a<b" stay. Inline formatting joins its text ("<i>x</i>s" -> "xs"); anything else is a gap.
_HTML_DROP = re.compile(r"<(script|style)\b[^>]*>.*?(?:</\1\s*>|$)", re.I | re.S)
_HTML_INLINE = re.compile(
    r"</?(?:a|b|i|u|em|strong|sub|sup|span|code|tt|small|mark)\b[^<>]*>", re.I
)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")


def strip_html(text: str) -> str:
    """``text`` without HTML tags; script and style elements go with their contents."""
    if "<" not in text:
        return text
    text = _HTML_DROP.sub(" ", text)
    return _HTML_TAG.sub(" ", _HTML_INLINE.sub("", text))


def clean_text(raw: str) -> str:
    """Plain, single-spaced text from an abstract or title carrying LaTeX and Markdown."""
    return clean_text_cut(raw)[0]


def clean_text_cut(raw: str) -> tuple[str, bool]:
    """``clean_text`` and whether it was cut to ``MAX_ABSTRACT_CHARS`` (ingest warns then)."""
    cut = len(raw) > MAX_ABSTRACT_CHARS * 2  # the tail goes before cleaning (it is slow)
    text = _CONTROL.sub(" ", raw[: MAX_ABSTRACT_CHARS * 2])
    text = strip_html(text)
    text = _MD_CODE.sub(r"\1", text)
    text = _MD_BOLD.sub(r"\2", text)
    text = _MD_EM.sub(r"\1", text)
    if text.count("$") % 2:  # an unpaired dollar is money, not math
        text = text.replace("$", "\\$")
    text = _LATEX_SPAN.sub(lambda m: _latex_span(m.group(0)), text)
    text = _GONE_GAP.sub("", _GONE_PARENS.sub(_GONE, text)).replace(_GONE, "")
    text = _SPACES.sub(" ", text).strip()
    if len(text) <= MAX_ABSTRACT_CHARS:
        return text, cut
    return text[:MAX_ABSTRACT_CHARS].rsplit(" ", 1)[0] + " …", True
