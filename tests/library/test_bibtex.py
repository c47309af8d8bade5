"""BibTeX export keys: readable, the same for a paper in every export, unique within one.

Breaks seen red: the previous digest/text/bibtex.py (order-based 'b', 'c' suffixes, so a paper's key
changed with the papers beside it; 'mller' for Müller; 'ada' for 'Lovelace, Ada'; 'anon…paper' keys
for the bundled papers): all four tests; the longer tags for tag collisions removed: the
300 look-alikes collide."""

from __future__ import annotations

import re

from digest import BUNDLED_PAPERS
from digest.ingest.parse import parse_neurips_list
from digest.models import Links, Paper
from digest.text.bibtex import cite_key, export

BUNDLED = BUNDLED_PAPERS


def paper(pid: str, title: str, *authors: str, year: int | None = 2026) -> Paper:
    return Paper(
        id=pid,
        source="jsonl",
        title=title,
        abstract_raw="",
        abstract="",
        authors=authors,
        year=year,
        venue="NeurIPS 2026",
    )


def keys(bib: str) -> list[str]:
    return re.findall(r"^@\w+\{([^,]+),", bib, re.MULTILINE)


A = paper("2601.00001", "Sparse autoencoders find features", "Ada Lovelace")
TWIN = paper("2601.00002", "Sparse coding at scale", "Ada Lovelace")  # same author, year, word
OTHER = paper("2601.00003", "On the geometry of attention", "Alan Turing")


def test_keys_read_like_author_year_word():
    assert cite_key(A).startswith("lovelace2026sparse-")
    assert cite_key(OTHER).startswith("turing2026geometry-")  # 'On the' says nothing
    comma = paper("x1", "Sparse autoencoders", "Lovelace, Ada")
    assert cite_key(comma).startswith("lovelace2026sparse-")
    assert cite_key(paper("x2", "Über Graphen", "Jürgen Müller")).startswith("muller2026uber-")
    headline = paper("x3", "TRACE: Temporal Reconstruction Attack on Encodings")  # no authors
    assert cite_key(headline).startswith("trace2026temporal-")
    assert cite_key(paper("x4", "Sparse autoencoders", "Ada Lovelace", year=None)).startswith(
        "lovelacesparse-"
    )


def test_a_papers_key_is_the_same_in_every_export():
    alone = keys(export([A]))
    assert alone == [cite_key(A)]
    for company in ([A, TWIN], [TWIN, A], [OTHER, TWIN, A], [A, A, TWIN]):
        bib = export(company)
        assert cite_key(A) in keys(bib) and cite_key(TWIN) in keys(bib)
        assert len(keys(bib)) == len({p.id for p in company})  # a paper twice is written once
    assert cite_key(A) != cite_key(TWIN)


def test_keys_are_unique_even_when_short_tags_collide():
    alike = [paper(f"id-{n}", "Sparse autoencoders", "Ada Lovelace") for n in range(300)]
    got = keys(export(alike))
    assert len(got) == 300 and len(set(got)) == 300
    assert {k[:19] for k in got} == {"lovelace2026sparse-"}


def test_the_bundled_papers_get_readable_unique_keys():
    papers = [
        Paper(**{f: getattr(r, f) for f in r.__dataclass_fields__})
        for r in parse_neurips_list(BUNDLED.read_text(encoding="utf-8")).records
    ]
    got = keys(export(papers))
    assert len(got) == len(papers) == len(set(got))
    for key in got:
        assert re.fullmatch(r"[a-z0-9]{4,}-[0-9a-f]{4}", key) and "paper" not in key, key


def _entries(bib: str) -> list[str]:
    """Entries as BibTeX reads them: every brace counts, escaped or not, and an entry ends where
    its braces balance. A field that closes early leaves text outside any entry."""
    out, depth, start = [], 0, None
    for i, ch in enumerate(bib):
        if ch == "@" and depth == 0:
            start = i
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            assert depth >= 0, f"unbalanced '}}' at {i}: {bib[max(0, i - 40) : i + 1]!r}"
            if depth == 0:
                out.append(bib[start : i + 1])
                start = None
        elif depth == 0 and start is None and not ch.isspace():
            raise AssertionError(f"text outside any entry at {i}: {bib[i : i + 40]!r}")
    assert depth == 0
    return out


def test_hostile_titles_and_authors_keep_every_entry_readable():
    """One paper with stray braces, a backslash and LaTeX specials in its title, authors and link
    must not end its fields early: the other papers' entries still parse, one entry each.

    Breaks seen red: braces escaped as '\\{' / '\\}' (BibTeX still counts them): the
    '}}}}@misc{evil' title closes the entry early; the URL written unescaped: a '}' in the link
    ends the url field; backslashes left as they are: 'Back\\' would read as a LaTeX command."""
    evil = Paper(
        id="evil-1",
        source="jsonl",
        title="}}}}@misc{evil, title={pwned} \\ 100% x_y",
        abstract_raw="",
        abstract="",
        authors=("O'Brien}", "Back\\"),
        year=2026,
        venue="NeurIPS 2026",
        links=Links(abs="https://example.org/a}b{c"),
    )
    bib = export([A, evil, OTHER])
    found = _entries(bib)
    assert len(found) == 3
    assert [k for k in keys(bib)] == [cite_key(A), cite_key(evil), cite_key(OTHER)]
    assert "textbraceright{}" in found[1] and "100\\%" in found[1]
    assert "Back\\textbackslash{}" in found[1]
    assert "https://example.org/a%7Db%7Bc" in found[1]


def test_only_papers_from_arxiv_are_called_arxiv_preprints():
    """A venue-less paper from a JSONL file with no arXiv id or link is @misc, never
    `journal = {arXiv preprint}` (the reviewer's report); one from arXiv (its source, an id that
    is an arXiv id, or an arxiv.org link) is an arXiv preprint with its id; a venue stays a
    booktitle. Breaks that turn this red: the old `p.venue or "arXiv preprint"` fallback;
    arxiv_id ignoring links or ids; @article kept for a paper that has no journal."""

    def bare(pid: str, source: str = "jsonl", links: Links | None = None) -> Paper:
        return Paper(
            id=pid,
            source=source,
            title="Counting Sheep",
            abstract_raw="",
            abstract="",
            authors=("Ada Lovelace",),
            year=2026,
            links=links or Links(),
        )

    local = _entries(export([bare("x1", links=Links(abs="https://example.org/x1"))]))[0]
    assert local.startswith("@misc{") and "arXiv" not in local and "journal" not in local
    for p in (
        bare("2611.01234", source="arxiv"),
        bare("2611.01234"),
        bare("j7", links=Links(abs="https://arxiv.org/abs/2611.01234v2")),
        bare("j8", links=Links(pdf="https://arxiv.org/pdf/2611.01234")),
    ):
        (found,) = _entries(export([p]))
        assert found.startswith("@article{"), found
        assert "journal = {arXiv preprint arXiv:2611.01234}" in found, found
        assert "eprint = {2611.01234}" in found, found
    assert _entries(export([A]))[0].startswith("@inproceedings{")
    assert "booktitle = {NeurIPS 2026}" in _entries(export([A]))[0]


def test_plain_ids_that_look_like_old_arxiv_ids_are_not_arxiv_preprints(store):
    """``lab/2023001`` from a JSONL file is no arXiv id (old-style ids need an arXiv archive, as
    arXiv spells it): stored under its own id with no arXiv id, and exported as @misc. Real old and
    new ids still are, and a stored paper's arXiv id (here taken from an arXiv record merged into a
    JSONL one with other links) is what the export cites. Breaks that turn this red: any lowercase
    word accepted as an archive, or re.I (HEP-TH); bibtex recomputing instead of using p.arxiv_id;
    to_paper not passing the row's arxiv_id."""
    from digest.ingest.parse import make_record
    from digest.text.arxiv_ids import arxiv_base_id, arxiv_ref

    for text in ("lab/2023001", "lab/2023001v2", "HEP-TH/9901001", "Math/0309136", "xcs/0101001"):
        assert arxiv_ref(text) is None and arxiv_base_id(text) is None, text
    assert arxiv_ref("hep-th/9901001v2") == ("hep-th/9901001", 2)
    assert arxiv_ref("math.GT/0309136") == ("math.GT/0309136", None)
    assert arxiv_ref("arXiv:2611.01234v3") == ("2611.01234", 3)
    lab = make_record(source="jsonl", id="lab/2023001v2", title="Counting Sheep", abstract="")
    store.papers.upsert([lab])
    stored = store.papers.get("lab/2023001v2")
    assert (stored.id, stored.arxiv_id) == ("lab/2023001v2", None)
    (found,) = _entries(export([stored]))
    assert found.startswith("@misc{") and "arXiv" not in found, found
    text = "We count sheep on farms with a transformer and release the counting benchmark. " * 4
    links = Links(abs="https://example.org/j1", pdf="https://example.org/j1.pdf")
    own = make_record(source="jsonl", id="j1", title="Sheep", abstract=text, links=links)
    arx = make_record(source="arxiv", id="2611.04321v1", title="Sheep Counting", abstract=text)
    store.papers.upsert([own, arx])
    merged = store.papers.get("j1")
    assert (merged.links.abs, merged.arxiv_id) == (links.abs, "2611.04321")
    assert "eprint = {2611.04321}" in _entries(export([merged]))[0]


def test_a_key_from_a_very_long_word_fits_its_column(store) -> None:
    """A title word or surname hundreds of letters long made a key longer than `papers.cite_key`
    (200 characters): PostgreSQL refused the insert and the whole ingest (and the cite-key migration)
    stopped. Checked on each backend (SQLite does not enforce the length, PostgreSQL does).

    Breaks that turn this red: `make_key` without the `[:MAX_KEY_WORD]` cuts (PostgreSQL:
    StringDataRightTruncation; SQLite: the length assertion).
    """
    from digest.ingest.parse import make_record

    dna = "acgt" * 60
    rec = make_record(
        source="jsonl",
        id="long2",
        title=f"{dna} sequence analysis",
        abstract="A normal abstract.",
        authors=("Ada " + "Lovelace" * 40,),
    )
    store.papers.upsert([rec])
    key = cite_key(store.papers.get("long2"))
    assert len(key) <= 200 and key.startswith("lovelace")
