"""TL;DR lines: one sentence saying what a paper did and found. Pure text, no I/O.

The default line is extractive and deterministic: the abstract's sentence that the headline
rules (digest/text/headline.py) rank first as stating the contribution, never one that only restates
the title, and never the sentence a derived headline was already taken from. An abstractive line
(digest/tldr/writer.py) is cached on the stored paper as ``Paper.tldr`` and wins when present.
docs/tldr.md explains both.
"""

from __future__ import annotations

import re
from functools import lru_cache

from digest.models import Paper
from digest.text.acronyms import acronym_span
from digest.text.hashes import normalize_title
from digest.text.headline import headline_sentence, ranked_sentences, shorten
from digest.text.latex import clean_text
from digest.text.sentences import sentences

#: A TL;DR is at most this long; a longer sentence is cut on a word boundary with "…".
MAX_TLDR_CHARS = 300
#: A sentence shorter than this says too little to stand alone ("Code is available.").
MIN_TLDR_CHARS = 40

_LEAD_IN = re.compile(
    r"^(?:in this (?:paper|work|study|article)|here|to this end|to address (?:this|these)"
    r"(?: \w+){0,3}|specifically|concretely|therefore|thus|hence|finally|moreover|overall)\s*,\s*",
    re.I,
)
_CITATION = re.compile(r"\s*\[\d+(?:\s*[,–-]\s*\d+)*\]")
_RESULT = re.compile(
    r"\b(?:outperform|achiev|improv|reduc|surpass|exceed|reach(?:es|ed)?\b|dominat|"
    r"state[- ]of[- ]the[- ]art|we (?:find|observe|show|prove|demonstrate)\b|"
    r"(?:results|experiments|evaluations?|analys[ie]s) (?:show|demonstrate|indicate|confirm|reveal))"
    r"|\d(?:\.\d+)?\s?(?:%|pp\b|×|x\b|dB\b)",
    re.I,
)
_OWN_WORK = re.compile(
    r"\b(?:we|our (?:method|approach|model|framework|analysis|results?))\s+(?:\w+\s+){0,2}?"
    r"(?:show|find|prove|demonstrate|observe|reveal|establish|identify|derive|introduce|propose|"
    r"present|develop|design|formali[sz]e|build|release|conduct|restore|enable)",
    re.I,
)
# An opening that leans on what came before ("These gains…") or sets the scene ("Prior work…").
_BACKGROUND = re.compile(
    r"^(?:this|these|those|such|it|they|however|yet|while|although|despite|prior|previous|"
    r"existing|current|recent|most|many)\b",
    re.I,
)
# A connective that ties a sentence to the one before it; dropped, the sentence reads alone
# ("Independently, replacing…" -> "Replacing…"). "We also/further show" becomes "We show".
_CONNECTIVE = re.compile(
    r"^(?:independently|however|in addition|additionally|also|further(?:more)?|moreover|"
    r"similarly|likewise|besides|conversely|in contrast|nevertheless|nonetheless|instead|"
    r"in particular|importantly|notably|crucially|lastly|next|then|as a result|consequently|"
    r"accordingly|in turn|beyond (?:this|that))\s*,\s*",
    re.I,
)
_WE_ALSO = re.compile(
    r"^(we|our (?:\w+ )?\w+)\s+(?:also|further|additionally|then|finally|again|likewise|"
    r"similarly)\s+",
    re.I,
)
# A sentence that points back at what came before cannot stand alone: it opens with a pronoun,
# demonstrative or connective, says "also"/"further" in its first words, or names "these
# results", "such methods", "the same effect" anywhere. "This paper/work…" names the paper.
_SELF = r"(?:paper|work|study|article|manuscript|submission)\b"
_POINTS_BACK_OPENING = re.compile(
    r"^(?:(?:this|it|its|here)\b(?!\s+" + _SELF + r")|these|those|such|they|their|them|"
    r"the same|the former|the latter|also|further(?:more)?|moreover|however|independently|"
    r"in addition|additionally|similarly|likewise|yet|still|then|thus|hence|therefore|"
    r"consequently|as a result|instead|in contrast|conversely|nevertheless|nonetheless|"
    r"besides|again|another|but|and|so|or|nor)\b",
    re.I,
)
_POINTS_BACK = re.compile(
    r"\b(?:these|those|the same\b(?!\s+time)|the former|the latter|aforementioned|"
    r"above[- ]mentioned|such\s+(?!as\b|that\b)\w+|this\s+(?!" + _SELF + r")\w+)",
    re.I,
)
_ALSO_EARLY = re.compile(r"^(?:\S+\s+){0,3}?(?:also|further|additionally)\b", re.I)
_TOKEN = re.compile(r"[\w\-/]+")
# Two capitals in a letters-only token, not touching a digit, hyphen, underscore or slash.
_ACRONYM_LIKE = re.compile(r"(?<![\w\-/])[A-Z][A-Za-z]*[A-Z][A-Za-z]*(?![\w\-/])")
# Acronyms a reader of ML papers knows without the long form.
KNOWN_ACRONYMS = frozenset(
    [
        "AI",
        "ML",
        "NLP",
        "CV",
        "RL",
        "LLM",
        "LM",
        "VLM",
        "MLLM",
        "GPU",
        "CPU",
        "TPU",
        "API",
        "QA",
        "IT",
        "KL",
        "MLP",
        "CNN",
        "RNN",
        "GNN",
        "GAN",
        "VAE",
        "LSTM",
        "GPT",
        "BERT",
        "SOTA",
        "PCA",
        "SVD",
        "SGD",
        "ODE",
        "PDE",
        "MCMC",
        "IID",
        "OOD",
        "ROC",
        "AUC",
        "PSNR",
        "SSIM",
        "FID",
        "BLEU",
        "RGB",
        "SQL",
        "HTML",
        "JSON",
        "URL",
        "DNA",
        "RNA",
        "MRI",
        "CT",
        "ECG",
        "EEG",
        "US",
        "UK",
        "EU",
        "USD",
        "PhD",
        "ReLU",
        "CoT",
        "RAG",
        "RLHF",
        "DPO",
        "PPO",
        "SFT",
        "KV",
        "NeRF",
        "ViT",
        "LoRA",
        "MoE",
        "ASR",
        "TTS",
        "OCR",
        "NER",
        "NLI",
        "IoT",
        "AR",
        "VR",
        "XR",
        "HPC",
        "IR",
    ]
)
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "and",
        "or",
        "in",
        "on",
        "to",
        "with",
        "by",
        "via",
        "from",
        "as",
        "at",
        "is",
        "are",
        "be",
        "we",
        "our",
        "this",
        "that",
        "these",
        "its",
        "it",
        "their",
        "which",
        "using",
        "based",
        "into",
        "over",
        "under",
        "between",
        "through",
    ]
)


def _words(text: str) -> set[str]:
    """Content words of ``text``, case and accents folded (a crude stem: a trailing 's' goes)."""
    return {w.rstrip("s") for w in normalize_title(text).split() if w not in _STOP and len(w) > 1}


def restates(sentence: str, title: str) -> bool:
    """True when ``sentence`` says little beyond ``title``: under four content words the title
    lacks, or the title itself (a line that repeats the headline tells the reader nothing)."""
    extra = _words(sentence) - _words(title)
    return len(extra) < 4 or normalize_title(sentence) == normalize_title(title)


def tidy(sentence: str) -> str:
    """A sentence as a TL;DR: lead-in ("In this paper, "), connective ("Independently, ",
    "we also") and numeric citations dropped, capitalised, single-spaced, at most
    ``MAX_TLDR_CHARS``."""
    return shorten(_plain(sentence), MAX_TLDR_CHARS)


def _plain(sentence: str) -> str:
    """``tidy`` before the cut."""
    text = " ".join(_CITATION.sub("", sentence).split())
    for _ in range(3):  # "Finally, in this paper, moreover, …": peel each opening off
        text = _CONNECTIVE.sub("", _LEAD_IN.sub("", text))
    text = _WE_ALSO.sub(r"\1 ", text)
    return text[:1].upper() + text[1:]


def points_back(line: str) -> bool:
    """True when ``line`` leans on a sentence before it ("This picture…", "We show that these
    gains…", "…achieves the same effect", "Our method also…")."""
    return bool(
        _POINTS_BACK_OPENING.match(line)
        or _POINTS_BACK.search(line)
        or _ALSO_EARLY.match(line)
        or line.rstrip().endswith("?")  # a question asks what the sentences after it answer
    )


def _acronyms(text: str) -> list[str]:
    """The acronyms ``text`` names ("SAE", "SAEs", "GRPO", "CoT"), in order, each once: capitals
    with at most one small letter inside. A token with a digit, an underscore, a slash or a
    hyphen is a model, benchmark or variable name ("Qwen3.5-27B", "CLAW-Eval", "W_V/W_O")."""
    seen: list[str] = []
    for m in _ACRONYM_LIKE.finditer(text):
        token = m.group(0)
        upper = sum(c.isupper() for c in token)
        small = len(_base(token)) - sum(c.isupper() for c in _base(token))
        if token[0].isupper() and upper >= 2 and small <= 1 and token not in seen:
            seen.append(token)
    return seen


def _base(acronym: str) -> str:
    """'SAEs' -> 'SAE' (a plural's trailing s)."""
    return acronym[:-1] if acronym.endswith("s") and acronym[:-1].isupper() else acronym


@lru_cache(maxsize=16384)
def _long_form(acronym: str, abstract: str) -> str | None:
    """The words the abstract spells ``acronym`` with ("sparse autoencoder" for SAE from
    "Sparse autoencoders (SAEs)"), singular when the acronym is; None when it never does."""
    base = _base(acronym)
    define = re.compile(r"\(\s*" + re.escape(base) + r"(s?)\s*[),;]")
    for m in define.finditer(abstract):
        words = re.findall(r"[\w\-]+", abstract[max(0, m.start() - 200) : m.start()])[-11:]
        n = acronym_span(base, words)
        if not n:
            continue
        long = words[-n:]
        long = [w.lower() if w[:1].isupper() and w[1:].islower() else w for w in long]
        if m.group(1) and acronym == base and long[-1].endswith("s"):
            long[-1] = long[-1][:-1]  # defined as "SAEs", named here as one "SAE"
        return " ".join(long)
    return None


def _expanded(line: str, abstract: str, title: str) -> tuple[str, bool]:
    """``line`` with each acronym the card does not spell out expanded on first use from the
    abstract ("SAE" -> "sparse autoencoder (SAE)"), and whether every one now is: an acronym
    is known (LLM, GPU), in the title, spelled out in the line itself, or defined by the
    abstract."""
    title_tokens = {_base(t) for t in _TOKEN.findall(title)}
    whole = True
    for acronym in _acronyms(line):
        base = _base(acronym)
        if base in KNOWN_ACRONYMS or acronym in KNOWN_ACRONYMS or base in title_tokens:
            continue
        if re.search(r"\(\s*" + re.escape(base) + r"s?\s*\)", line):
            continue
        long = _long_form(acronym, abstract)
        if long is None:
            whole = False
            continue
        found = re.search(r"(?<![\w\-])" + re.escape(acronym) + r"(?![\w\-])", line)
        if found:
            line = f"{line[: found.start()]}{long} ({acronym}){line[found.end() :]}"
    return line, whole


@lru_cache(maxsize=65536)
def line_of(sentence: str, abstract: str, title: str = "") -> str:
    """``sentence`` of ``abstract`` as the TL;DR shows it: tidied, its acronyms spelled out."""
    return shorten(_expanded(_plain(sentence), abstract, title)[0], MAX_TLDR_CHARS)


def stands_alone(sentence: str, abstract: str, title: str = "") -> bool:
    """True when the sentence, tidied, neither points back nor names an acronym the card
    (title, the line) never spells out."""
    text = _plain(sentence)
    return not points_back(text) and _expanded(text, abstract, title)[1]


def _tier(i: int, sentence: str, ranked: list[int], alone: bool = True) -> int:
    """How well a sentence states what the paper did and found (0 best): one the headline rules
    rank, one reporting a result, one in the authors' voice, any other, background, and last
    one that cannot stand alone (points back, or an acronym never spelled out)."""
    if not alone:
        return 5
    if i in ranked:
        return 0
    if _BACKGROUND.match(sentence) or i == 0:
        return 4
    if _RESULT.search(sentence):
        return 1
    return 2 if _OWN_WORK.search(sentence) else 3


def _order(sents: list[str], abstract: str = "", title: str = "") -> list[int]:
    """Every sentence index, best TL;DR first: by tier, then one that fits before one that must
    be cut, then the headline rules' order (tier 0) or the abstract's."""
    ranked = ranked_sentences(sents)

    def key(i: int) -> tuple[int, bool, int]:
        text = _plain(sents[i])
        line, whole = _expanded(text, abstract, title)
        fits = MIN_TLDR_CHARS <= len(line) <= MAX_TLDR_CHARS
        tier = _tier(i, text, ranked, whole and not points_back(text))
        return tier, not fits, ranked.index(i) if i in ranked else i

    return sorted(range(len(sents)), key=key)


@lru_cache(maxsize=4096)  # a paper is shown again and again (pages, previews, digests)
def extractive_tldr(abstract: str, title: str = "", title_derived: bool = False) -> str:
    """The abstract's sentence that best states the contribution, tidied ('' for no abstract).

    Skipped: a sentence restating ``title``; with ``title_derived``, the sentence the headline
    was derived from. Within a tier, sentences from ``MIN_TLDR_CHARS`` to ``MAX_TLDR_CHARS`` long
    come before longer ones (which are cut).
    """
    text = clean_text(abstract)
    sents = sentences(text)
    if not sents:
        return ""
    used = headline_sentence(sents) if title_derived else None
    order = _order(sents, text, title)
    best = next((i for i in order if i != used and not restates(sents[i], title)), None)
    return "" if best is None else line_of(sents[best], text, title)


def tldr_line(paper: Paper) -> str:
    """The TL;DR shown for ``paper``: its cached abstractive line, else the extractive one."""
    if paper.tldr:
        return paper.tldr
    return extractive_tldr(paper.abstract, paper.title, paper.title_derived)
