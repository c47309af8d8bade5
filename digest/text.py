"""Text hygiene for paper metadata: LaTeX/Markdown to plain text, headlines, normalised keys."""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

from digest.errors import DigestError

# The converter loads with the first abstract holding LaTeX (an ingest), not with every command.
if TYPE_CHECKING:
    from pylatexenc.latex2text import LatexNodes2Text

# Its warnings about odd macros in abstracts are noise to users; we fall back to the raw span.
logging.getLogger("pylatexenc").setLevel(logging.ERROR)

#: Abstracts longer than this are cut (a 10 MB "abstract" is a broken record, not a paper).
MAX_ABSTRACT_CHARS = 20_000

#: The archives of old-style arXiv ids (``hep-th/9901001``, ``math.GT/0309136``), as arXiv spells
#: them (lowercase, a regex alternation): an id like ``lab/2023001`` from a JSONL file is none.
ARXIV_ARCHIVES = (
    "acc-phys|adap-org|alg-geom|ao-sci|astro-ph|atom-ph|bayes-an|chao-dyn|chem-ph|cmp-lg|comp-gas|"
    "cond-mat|cs|dg-ga|funct-an|gr-qc|hep-ex|hep-lat|hep-ph|hep-th|math|math-ph|mtrl-th|nlin|"
    "nucl-ex|nucl-th|patt-sol|physics|plasm-ph|q-alg|q-bio|quant-ph|solv-int|supr-con"
)
# The one definition of an arXiv id: new style (2401.01234) or archive(.SUBJ)/YYMMNNN, then vN.
# Case-sensitive: "HEP-TH/9901001" or "Cs/0101001" are not arXiv's spelling.
_ARXIV_CORE = (
    rf"(?<![\w.\-])(\d{{4}}\.\d{{4,5}}|(?:{ARXIV_ARCHIVES})"
    r"(?:\.[A-Z]{2})?/\d{7})(?:v(\d+))?(?![\w\-])"
)
_ARXIV_EXACT = re.compile(rf"(?:[aA][rR][xX][iI][vV]:)?{_ARXIV_CORE}")
_ARXIV_URL = re.compile(rf"[aA][rR][xX][iI][vV]\.org/(?:abs|pdf)/{_ARXIV_CORE}")
_ARXIV_ANY = re.compile(_ARXIV_CORE)


def arxiv_ref(text: str | None, *, url: bool = False) -> tuple[str, int | None] | None:
    """(base id, version) of an id that *is* an arXiv id (``2611.00002v2``, ``arXiv:…``), or of
    an arxiv.org abs/pdf URL when ``url``; None otherwise (an id like ``x1``, ``lab/2023001``)."""
    if not text:
        return None
    m = _ARXIV_URL.search(text) if url else _ARXIV_EXACT.fullmatch(text.strip())
    if not m:
        return None
    return m.group(1), int(m.group(2)) if m.group(2) else None


def paper_arxiv_ref(paper_id: str, source: str, *urls: str | None) -> tuple[str, int | None] | None:
    """(base id, version) of a paper's arXiv identity: its id when that is an arXiv id, else an
    arxiv.org abs/pdf link among ``urls``, else (source arxiv) an arXiv id inside its id."""
    ref = arxiv_ref(paper_id)
    for url in urls:
        ref = ref or arxiv_ref(url, url=True)
    if ref is None and source == "arxiv" and (base := arxiv_base_id(paper_id)):
        return base, None
    return ref


def arxiv_base_id(text: str | None) -> str | None:
    """The first arXiv id anywhere in ``text``, without its version (…/2401.01234v2 -> 2401.01234)."""
    m = _ARXIV_ANY.search(text) if text else None
    return m.group(1) if m else None


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


#: Lone UTF-16 surrogates: half a character (a JSON ``\ud800`` escape, an emoji pair cut in
#: two). Python strings may hold them, but no UTF-8 text can: a database write would fail.
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    """True if ``text`` holds a lone surrogate, which cannot be stored or shown."""
    return _SURROGATE.search(text) is not None


def drop_surrogates(text: str) -> str:
    """``text`` without lone surrogates (each is half of a character, so nothing readable goes)."""
    return _SURROGATE.sub("", text)


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


# The full-width forms block (U+FF01-FF5E) and the ideographic space, as NFKC maps them.
_FULL_WIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}


def numeric_text(text: str) -> str:
    """A numeric argument as typed on any keyboard: full-width '２' and '０９：００' become ASCII
    (NFKC's mapping of the full-width block), so every number a command takes reads the same.
    Superscripts ('²') and other scripts' digits are not mapped, and the ASCII checks refuse them."""
    return text.translate(_FULL_WIDTH).strip()


def is_number(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts '²' and other characters int() rejects."""
    return bool(re.fullmatch(r"[0-9]+", text))


def has_visible(text: str) -> bool:
    """True if ``text`` has a letter, digit or symbol: zero-width and other format characters,
    spaces and punctuation alone show nothing a person could read back or match on."""
    return any(unicodedata.category(c)[0] in "LNS" for c in text)


def whole_number(text: str, what: str, low: int, high: int | None = None) -> int:
    """``text`` as a whole number from ``low`` to ``high`` (None: no top), typed on any keyboard;
    anything else is a DigestError naming ``what``. Chat arguments and CLI options share it."""
    digits = numeric_text(str(text))
    # a 5000-digit number is refused here, not by a ValueError from int()'s digit limit
    value = int(digits) if is_number(digits) and len(digits) <= 30 else low - 1
    if low <= value and (high is None or value <= high):
        return value
    span = f"from {low} up" if high is None else f"from {low} to {high}"
    raise DigestError(
        f"{what} must be a whole number {span}, {typed_value(str(text).strip(), digits)}."
    )


def typed_value(text: str, digits: str) -> str:
    """How an error names what was typed, never cut silently: a missing number, a huge one or long text is said so."""
    if not text:
        return "but no number was given"
    if is_number(digits) and len(digits) > 12:
        return f"got a {len(digits)}-digit number (out of range)"
    return f"got {text!r}" if len(text) <= 20 else f"got {text[:20] + '…'!r}"


def normalize_title(title: str) -> str:
    """A key under which the same paper from two sources collides (case, accents, punctuation)."""
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def content_hash(text: str) -> str:
    """Stable hash of a paper's text, for change detection and derived ids."""
    return hashlib.sha256(normalize_title(text).encode()).hexdigest()


def derived_id(prefix: str, abstract: str) -> str:
    """A stable id for a source that has none: the prefix plus a content hash."""
    return f"{prefix}-{content_hash(abstract)[:12]}"


def sentences(text: str) -> list[str]:
    """Split plain text into sentences without breaking decimals like 2.5 or e.g."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z(\"'])", text)
    return [p.strip() for p in parts if p.strip()]


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


_URL_PASSWORD = re.compile(r"(?<=://)([^:/@\s]*):[^@\s]*@")


def hide_password(text: str) -> str:
    """``text`` with the password of any URL in it replaced by *** (also for unparseable URLs)."""
    return _URL_PASSWORD.sub(r"\1:***@", text)


def plural(n: int, noun: str) -> str:
    """'1 paper', '2 papers'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
