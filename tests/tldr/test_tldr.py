"""The extractive TL;DR: a sentence of the abstract stating the contribution, never the title.

Deliberate breaks that turn these red: `extractive_tldr` taking the first sentence instead of
the ranked one (background openings like "Prior work on grokking…" fail the bundled check);
dropping the `restates` filter (the title-restating sentence is picked); dropping the skip of
the derived headline's sentence (TRACE's "we introduce" sentence comes back); `tidy` not
cleaning (citations and lead-ins stay); `card()` not setting `tldr` (cards carry none).
"""

from __future__ import annotations

import re

import pytest

from bot.commands.replies import card
from digest import BUNDLED_PAPERS
from digest.ingest.parse import parse_neurips_list
from digest.models import Paper
from digest.text.hashes import normalize_title
from digest.text.headline import headline_sentence
from digest.text.latex import clean_text
from digest.text.sentences import sentences
from digest.tldr.extractive import (
    MAX_TLDR_CHARS,
    extractive_tldr,
    line_of,
    points_back,
    restates,
    stands_alone,
    tldr_line,
)


def bundled() -> list[Paper]:
    records = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8")).records
    return [Paper(**{f: getattr(r, f) for f in r.__dataclass_fields__}) for r in records]


def is_sentence_of(line: str, abstract: str, title: str = "") -> bool:
    """``line`` is a sentence of ``abstract`` as a TL;DR shows it (lead-in and connective
    dropped, capitalised, acronyms spelled out, maybe cut with "…")."""
    text = clean_text(abstract)
    return any(line_of(s, text, title) == line for s in sentences(text))


def test_every_bundled_paper_gets_a_sentence_of_its_abstract_that_is_not_its_headline():
    papers = bundled()
    assert len(papers) == 19
    for p in papers:
        line = extractive_tldr(p.abstract, p.title, p.title_derived)
        assert line and len(line) <= MAX_TLDR_CHARS, p.title
        assert is_sentence_of(line, p.abstract, p.title), (p.title, line)
        assert not restates(line, p.title), (p.title, line)
        sents = sentences(clean_text(p.abstract))
        used = sents[headline_sentence(sents)]
        assert normalize_title(line.removesuffix("…")) not in normalize_title(used[: len(line)])
        assert line == extractive_tldr(p.abstract, p.title, p.title_derived)  # deterministic
    opening = [p for p in papers if extractive_tldr(p.abstract, p.title, True).startswith("Prior")]
    assert opening == []  # background ("Prior work on …") is never the TL;DR


def test_the_derived_headlines_sentence_is_not_used_again():
    trace = next(p for p in bundled() if p.title.startswith("TRACE"))
    line = extractive_tldr(trace.abstract, trace.title, True)
    assert "TRACE" not in line or "introduce" not in line.lower()
    assert line != extractive_tldr(trace.abstract, "", False)  # without the rule it would be


def test_a_sentence_restating_a_real_title_is_skipped():
    abstract = (
        "Graph transformers are popular. "
        "We introduce GraphSparse, a sparse attention for graph transformers. "
        "We show that sparse attention halves memory use on molecule benchmarks while keeping accuracy."
    )
    line = extractive_tldr(abstract, "GraphSparse: Sparse Attention for Graph Transformers")
    assert line.startswith("We show that sparse attention halves memory")


def test_latex_citations_and_lead_ins_are_cleaned():
    abstract = (
        r"Sorting is old [3]. In this paper, we propose \textbf{QuickMerge}, a sorting method that "
        r"runs in $\mathcal{O}(n \log n)$ time on adversarial inputs [1, 2] and beats timsort."
    )
    line = extractive_tldr(abstract, "QuickMerge")
    assert line.startswith("We propose QuickMerge")
    assert not re.search(r"[\\$\[\]{}]", line), line


def test_latex_refs_dashes_footnotes_and_links_do_not_reach_the_line():
    """Red with pylatexenc's defaults ("<cit.>", "(<ref>)", "[Code at github.]" split into its
    own sentence, "hrefhttp://x.ya method") or with "~" and spaced "---" left to the text."""
    abstract = (
        r"Sorting is old \cite{knuth}. We propose \href{http://x.y}{QuickMerge}, a sorting method"
        r"\footnote{Code at github.} that runs in time~\eqref{eq:time} on adversarial inputs "
        r"\citep{a,b} --- and beats timsort on Table~\ref{t}."
    )
    line = extractive_tldr(abstract, "Fast sorting")
    assert line == (
        "We propose QuickMerge, a sorting method that runs in time on adversarial inputs — "
        "and beats timsort on Table."
    )


def test_html_in_a_jsonl_abstract_does_not_reach_the_line():
    """Red without strip_html in clean_text: "<p>" and the script's body show in the line."""
    from digest.ingest.parse import parse_jsonl

    raw = (
        '{"id": "h1", "title": "Fast sorting", "abstract": "<p>Sorting is old.</p><p>We propose '
        "<b>QuickMerge</b>, a sorting method that beats timsort when p < 0.05.</p>"
        '<script>alert(1)</script>"}'
    )
    rec = parse_jsonl(raw).records[0]
    line = extractive_tldr(rec.abstract, rec.title)
    assert line == "We propose QuickMerge, a sorting method that beats timsort when p < 0.05."
    assert extractive_tldr(rec.abstract_raw, rec.title) == line


def test_no_abstract_no_line_and_a_cached_line_wins():
    assert extractive_tldr("", "A title") == ""
    p = bundled()[0]
    assert tldr_line(p) == extractive_tldr(p.abstract, p.title, p.title_derived)
    from dataclasses import replace

    assert tldr_line(replace(p, tldr="Cached by a model.")) == "Cached by a model."


@pytest.mark.parametrize("index", range(19))
def test_cards_carry_the_tldr_once(index):
    p = bundled()[index]
    c = card(p, feedback=True)
    assert c.tldr == tldr_line(p)
    assert normalize_title(c.tldr.removesuffix("…")) not in normalize_title(c.snippet)


def test_every_bundled_tldr_stands_alone():
    """No bundled TL;DR points back ("We show that this picture…", "Replicating prior analyses on
    these positions…", "Independently, … the same effect", "We also/further…") or names an
    acronym the card never spells out; the bench's share (python -m bench.tldr) is 0.

    Breaks that turn this red: `_tier` ranking a headline-ranked sentence before checking that it
    stands alone (7 of 19 lean on context again); `points_back` without the anywhere-check for
    "these"/"the same"; `_expanded` not spelling out "SAE" (the first paper's line)."""
    for p in bundled():
        line = extractive_tldr(p.abstract, p.title, p.title_derived)
        assert not points_back(line), (p.title, line)
        assert stands_alone(line, p.abstract, p.title), (p.title, line)


def test_a_sentence_pointing_back_is_ranked_after_one_that_stands_alone():
    """Breaks that turn this red: dropping a connective in `tidy` no longer done ("We also"
    stays); "This picture" accepted because `_tier` puts ranked sentences first."""
    abstract = (
        "Parity learning is hard for gradient methods under uniform samples. "
        "We show that this picture changes when samples come from a random walk on the cube. "
        "Our analysis proves a polynomial sample bound for sparse parities under random walks."
    )
    assert extractive_tldr(abstract).startswith("Our analysis proves a polynomial")
    assert line_of(
        "We also provide experiments on eight real datasets of sparse parities.", ""
    ) == ("We provide experiments on eight real datasets of sparse parities.")
    assert line_of("Independently, uniform aggregation matches learned attention here.", "") == (
        "Uniform aggregation matches learned attention here."
    )
    for leaning in (
        "These gains hold across five benchmarks and three model sizes.",
        "Replicating prior analyses on these positions, we find look-ahead intact.",
        "Uniform aggregation achieves the same effect on every benchmark we tried.",
        "The same model also improves calibration on all ten benchmark datasets.",
        "Calibration also improves on all ten benchmark datasets we tried.",
        "However the bound is loose for very deep networks with residual paths.",
        "But does algorithmic structure guarantee algorithmic behaviour in practice?",
    ):
        assert points_back(line_of(leaning, "")), leaning
    assert not points_back("This paper introduces a sparse parity learner for random walks.")


def test_an_acronym_is_spelled_out_from_the_abstract_or_the_sentence_ranks_last():
    """Breaks that turn this red: `_expanded` leaving "SAE" bare; `_long_form` ignoring a plural
    definition ("Sparse autoencoders (SAEs)"); an undefined acronym ("GRPO") not demoting."""
    abstract = (
        "Sparse autoencoders (SAEs) reconstruct activations from dictionary atoms. "
        "We run the first cross-layer SAE scaling study over 844 checkpoints of two models."
    )
    line = extractive_tldr(abstract)
    assert line.startswith("We run the first cross-layer sparse autoencoder (SAE) scaling study")
    assert is_sentence_of(line, abstract)
    undefined = (
        "Monitoring chains of thought matters for safety of deployed vision models today. "
        "Our intervention improves monitorability by up to 30.9% over GRPO on VIRL-39k. "
        "Our intervention keeps task accuracy on four standard benchmarks of vision models."
    )
    assert extractive_tldr(undefined).startswith("Our intervention keeps task accuracy")
    assert extractive_tldr(undefined, "GRPO baselines for monitoring").startswith(
        "Our intervention improves monitorability"
    )
