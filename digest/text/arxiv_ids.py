"""arXiv identifiers: the one definition of an id (new and old style, with a version), found
exactly, in an arxiv.org link, or anywhere in a text."""

from __future__ import annotations

import re

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
