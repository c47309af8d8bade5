"""Clean text and derived headlines."""

import re
from pathlib import Path

import pytest

from digest import BUNDLED_PAPERS
from digest.text.arxiv_ids import arxiv_base_id
from digest.text.hashes import normalize_title
from digest.text.headline import MAX_TITLE_CHARS, contribution_sentences, derive_title
from digest.text.latex import clean_text


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (r"we report $78$ cases", "we report 78 cases"),
        (
            r"we propose \textbf{TCFT}, a \underline{T}emporal model",
            "we propose TCFT, a Temporal model",
        ),
        (r"this is \emph{gradient alignment} indeed", "this is gradient alignment indeed"),
        ("**T**emporal **R**econstruction", "Temporal Reconstruction"),
        ("the tax---instruction tuning", "the tax—instruction tuning"),
        (r"we propose \method, an adaptive test", "we propose method, an adaptive test"),
        ("50% of runs cost $5", "50% of runs cost $5"),
        (r"$\texttt{Qwen}$ and $n=1{,}000$", "Qwen and n=1,000"),
        ("a *agent drift* case", "a agent drift case"),
        # Citations and references go (not "<cit.>", "(<ref>)"); "~" is a space.
        (r"as in Smith~et al.~\cite{a,b} and Eq.~\eqref{e1}.", "as in Smith et al. and Eq.."),
        (r"gains \citep[p.~3]{x} (\citet{y}), see Table~\ref{t}", "gains, see Table"),
        ("fast --- and cheap, 1--5 -- mostly", "fast — and cheap, 1–5 -- mostly"),
        (r"We propose X.\footnote{Code at github.} It works.", "We propose X. It works."),
        (r"see \href{http://x.y}{a method} or \url{http://a.b}", "see a method or http://a.b"),
        ("run with --help or ~5% of it", "run with --help or ~5% of it"),
        # HTML from JSON exports: tags go, script/style with their contents; "<" as text stays.
        (
            "<p>We <i>propose</i> X.</p><script>alert(1)</script><p>It works.</p>",
            "We propose X. It works.",
        ),
        ("p < 0.05 and a<b, x<y>z<br/>w", "p < 0.05 and a<b, x z w"),
    ],
)
def test_clean_text_converts_latex_and_markdown(raw, clean):
    assert clean_text(raw) == clean
    assert clean_text(clean) == clean  # stored abstracts are cleaned again for TL;DRs


def test_clean_text_never_raises_on_broken_latex():
    assert "brace" in clean_text(r"unbalanced { brace \textbf{ and $ math")


def test_clean_text_caps_huge_input():
    out = clean_text("word " * 2_000_000)
    assert len(out) <= 20_010 and out.endswith("…")


def test_acronym_titles_from_bundled_abstracts():
    paras = [
        p for p in re.split(r"\n\s*\n", BUNDLED_PAPERS.read_text(encoding="utf-8"))[1:] if p.strip()
    ]
    titles = [derive_title(p) for p in paras]
    assert "TRACE: Temporal Reconstruction Attack on Consecutive Encodings" in titles
    assert "TCFT: Temporal Critique Fine-Tuning" in titles
    assert any(t.startswith("TACT: Think-Act Calibration") for t in titles)


BUNDLED_HEADLINES = Path(__file__).resolve().parents[2] / "docs" / "headlines.md"


def test_bundled_headlines_name_the_contribution_and_match_the_docs():
    """Breaks that go red: drop the named-method rule (TensorCommitments, TRIDENT become
    background sentences); cut with "…" again; docs/headlines.md out of date."""
    paras = [
        p for p in re.split(r"\n\s*\n", BUNDLED_PAPERS.read_text(encoding="utf-8"))[1:] if p.strip()
    ]
    titles = [derive_title(p) for p in paras]
    assert len(titles) == 19
    assert "TensorCommitments: A tensor-native proof-of-inference scheme" in titles
    assert (
        "TRIDENT: A contract-scoped framework for post-selection evidence accountability" in titles
    )
    assert "Manifold geometry predicts the per-layer width exponent in both models" in titles
    background = re.compile(r"^(prior|recent|most|existing)\b", re.I)
    assert not [t for t in titles if background.match(t) or t.endswith("…")]
    documented = BUNDLED_HEADLINES.read_text(encoding="utf-8")
    assert all(f"| {t} |" in documented for t in titles)


def test_derived_headline_snippet_shows_what_was_done():
    abstract = (
        "Prior work on grokking studies optimizers. Networks memorise first. "
        "We introduce LayerGate, a gating scheme for residual streams. "
        "We show that it halves the grokking delay."
    )
    assert derive_title(abstract) == "LayerGate: A gating scheme for residual streams"
    assert contribution_sentences(abstract) == [
        "We introduce LayerGate, a gating scheme for residual streams.",
        "We show that it halves the grokking delay.",
    ]


def test_fallback_title_is_short_and_never_cut_mid_word():
    abstract = (
        "Understanding how extraordinarily overparameterised transformer architectures generalise "
        "beyond their training distribution remains an open and pressing question for the field. "
        "We study it."
    )
    title = derive_title(abstract)
    assert len(title) <= MAX_TITLE_CHARS + 1
    stem = title.rstrip("…")
    assert abstract.startswith(stem) and abstract[len(stem)] in " ,"


def test_normalize_title_ignores_case_accents_punctuation():
    assert normalize_title("Équivariant  GNNs: A Study!") == normalize_title(
        "equivariant gnns - a study"
    )


def test_arxiv_base_id_drops_version():
    assert arxiv_base_id("http://arxiv.org/abs/2401.01234v3") == "2401.01234"
    assert arxiv_base_id("hep-th/9901001v2") == "hep-th/9901001"
    assert arxiv_base_id("no id here") is None


def _span_by_chars(acronym: str, words: list[str]) -> int:
    """The character-by-character Schwartz-Hearst span, as acronym_span was first written."""
    letters = [c.lower() for c in acronym if c.isalnum()]
    text = " ".join(words)
    li, ti = len(letters) - 1, len(text) - 1
    while li >= 0:
        while ti >= 0 and (
            text[ti].lower() != letters[li] or (li == 0 and ti > 0 and text[ti - 1].isalnum())
        ):
            ti -= 1
        if ti < 0:
            return 0
        li, ti = li - 1, ti - 1
    used = text[ti + 1 :].split()
    if not used or used[0][0].lower() != letters[0]:
        return 0
    return len(used) if len(used) <= len(letters) + 5 else 0


def test_acronym_span_fast_path_equals_char_by_char_search():
    """The ASCII path (rfind per letter) finds the same span as the character loop.

    Breaks that go red: rfind without the word-start rule for the first letter (the 'a' inside
    'data' would start 'AM'); searching from ``ti`` instead of ``ti + 1`` (misses a letter at the
    end); the length limit dropped. Non-ASCII words keep the loop and are compared too."""
    import random

    from digest.text.acronyms import acronym_span

    rng = random.Random(1)
    cases = [("LLM", ["we", "use", "large", "language", "models"]), ("AM", ["data", "model"])]
    for _ in range(20_000):
        acr = "".join(rng.choice("ABCLMNxyz0-é") for _ in range(rng.randint(1, 5)))
        alphabet = "abcdeLMNOP0-9 _xyzé" if rng.random() < 0.2 else "abcdelmnLMN0 -"
        words = [
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
            for _ in range(rng.randint(0, 9))
        ]
        cases.append((acr, words))
    found = 0
    for acr, words in cases:
        assert acronym_span(acr, words) == _span_by_chars(acr, words), (acr, words)
        found += acronym_span(acr, words) > 0
    assert found > 500  # the comparison covers real spans, not only misses
