"""Reading someone's own library (issue 25, item 2): BibTeX, RIS, Zotero CSV and id lists, parsed
without I/O into entries with their identifiers, and every entry left out said with its line."""

import codecs

import pytest

from digest.library.entries import (
    MAX_ENTRIES,
    MAX_IMPORT_BYTES,
    LibraryError,
    parse_ref,
)
from digest.library.formats import parse_library

BIB = rb"""@string{nips = "NeurIPS 2025"}
% a comment Zotero never writes, but people do
@inproceedings{lovelace2025sparse,
  title = {Sparse {Autoencoders} Find M{\"u}ller's Features},
  author = {Lovelace, Ada and Alan Turing},
  booktitle = nips,
  year = {2025},
  abstract = {We train sparse autoencoders on $\ell_1$ penalties.},
  doi = {10.1000/ABC.123}
}
@article{turing2024graphs,
  title = "Message passing on graphs",
  journal = {arXiv preprint arXiv:2401.01234},
  year = 2024
}
@misc{broken, title = {never closed
@misc{notitle, author = {Nobody}}
@misc{again, title = {MESSAGE passing on Graphs!}}
"""


def test_bibtex_entries_fields_and_reasons():
    """Breaks tried: start lines 0-based (lines off by one: red); the BibTeX venue of an arXiv
    preprint kept ('arXiv preprint…' as venue: red); duplicates by title not folded (red)."""
    lib = parse_library(BIB, "mine.bib")
    assert lib.format == "BibTeX" and lib.read == 5
    first, second = lib.entries
    assert first.line == 3 and first.title == "Sparse Autoencoders Find Müller's Features"
    assert first.ref.doi == "10.1000/abc.123" and first.record.venue == "NeurIPS 2025"
    assert first.record.authors == ("Lovelace, Ada", "Alan Turing") and first.record.year == 2025
    assert "sparse autoencoders" in first.record.abstract and "$" not in first.record.abstract
    assert first.record.source == "library" and first.record.id.startswith("library-")
    assert second.ref.arxiv == "2401.01234" and second.record.id == "2401.01234"
    assert second.record.venue is None and second.record.links.abs.endswith("2401.01234")
    reasons = {s.line: s.reason for s in lib.skipped}
    assert reasons[16].startswith("unreadable") and reasons[17] == "no title"
    assert reasons[18] == "duplicate of the entry on line 11"


def test_our_own_export_names_the_stored_paper():
    """Re-importing `/papers export bibtex` from another channel: the note carries the id."""
    bib = (
        b"@misc{k, title = {T}, note = {digestbot id syn-sae-3 (title derived from the abstract)}}"
    )
    (entry,) = parse_library(bib, "digestbot-liked.bib").entries
    assert entry.ref.paper_id == "syn-sae-3"


RIS = b"""TY  - CONF
TI  - Diffusion models beat GANs
AU  - Noether, Emmy
AU  - Nash, John
PY  - 2021/06/01
AB  - We show that diffusion models
  reach better sample quality.
DO  - https://doi.org/10.5555/Diff.1
UR  - https://arxiv.org/abs/2105.05233v4
ER  -

TY  - JOUR
AU  - Nobody
ER  -

TY  - JOUR
TI  - Never ended
"""


def test_ris_entries_wrapped_lines_and_reasons():
    """Breaks tried: a wrapped abstract line dropped (its second half missing: red); an entry
    without ER silently imported (no reason: red)."""
    lib = parse_library(RIS, "export.ris")
    assert lib.format == "RIS" and lib.read == 3
    (e,) = lib.entries
    assert e.title == "Diffusion models beat GANs" and e.record.authors == (
        "Noether, Emmy",
        "Nash, John",
    )
    assert e.record.year == 2021 and e.record.abstract.endswith("reach better sample quality.")
    assert e.ref.arxiv == "2105.05233" and e.ref.doi == "10.5555/diff.1"
    assert [(s.line, s.reason.split(" (")[0]) for s in lib.skipped] == [
        (12, "no title"),
        (16, "unreadable RIS: the file ends inside this entry"),
    ]


ZOTERO = (
    '\ufeff"Key","Item Type","Publication Year","Author","Title","Publication Title","DOI",'
    '"Url","Abstract Note","Extra"\n'
    '"AB12","conferencePaper","2023","Hopper, Grace; Goedel, Kurt","Federated learning with '
    'client drift","ICML","","","We study client drift.","arXiv: 2302.00001"\n'
    '"CD34","journalArticle","2022","","","","10.1/x","","",""\n'
    '"EF56","preprint","2020","Turing, Alan","Reward shaping, revisited","","","'
    'https://openreview.net/forum?id=HkxYz0NFwB","",""\n'
).encode("utf-8")


def test_zotero_csv_columns_and_authors():
    """Breaks tried: 'Author' split on commas (four authors: red); Extra's arXiv id ignored (red)."""
    lib = parse_library(ZOTERO, "My Library.csv")
    assert lib.format == "CSV" and lib.read == 3
    first, third = lib.entries
    assert first.line == 2 and first.record.authors == ("Hopper, Grace", "Goedel, Kurt")
    assert first.ref.arxiv == "2302.00001" and first.record.venue == "ICML"
    assert third.ref.openreview == "HkxYz0NFwB" and third.title == "Reward shaping, revisited"
    assert [(s.line, s.reason) for s in lib.skipped] == [(3, "no title")]  # '10.1/x' is no DOI


def test_a_csv_quote_left_open_is_said_and_the_rows_after_it_are_read():
    """A quote left open would swallow the next rows into one title; a cell over csv's field
    limit would end the file. Breaks tried: csv read without strict (one merged entry, nothing
    skipped: red); reading stopped at the first bad row (rows 3, 4 and 7 lost: red); a restart
    on the line after the reader stopped, not after the row's first line (line numbers: red)."""
    big = "x" * 200_000
    text = (
        '"Key","Title","Abstract Note"\n'
        '"K1","Broken row with open quote,abc\n'
        '"K2","Title two",""\n'
        '"K3","Title three","an abstract\nover two lines"\n'
        f'"K4","{big}",""\n'
        '"K5","Title five",""\n'
    )
    lib = parse_library(text.encode(), "zotero.csv")
    assert [(e.line, e.title) for e in lib.entries] == [
        (3, "Title two"),
        (4, "Title three"),
        (7, "Title five"),
    ]
    assert [(s.line, s.reason) for s in lib.skipped] == [
        (2, "unreadable CSV row (a quote left open?)"),
        (6, "a cell over the CSV limit of 131,072 characters"),
    ]


def test_a_csv_without_a_title_column_is_refused():
    with pytest.raises(LibraryError, match="no Title column"):
        parse_library(b"Key,Author,Year\n1,Ann,2020\n", "people.csv")


IDS = b"""# my reading list
2401.01234v2, arXiv:2302.00001
https://arxiv.org/pdf/2105.05233
<https://doi.org/10.1145/3394486.3403043|the KDD paper>
https://openreview.net/forum?id=HkxYz0NFwB&noteId=abc
hello 2401.01234
"""


def test_id_list_reads_ids_and_links_and_names_what_is_not_one():
    """Breaks tried: Slack's <url|label> markup not unwrapped (the DOI unreadable: red)."""
    lib = parse_library(IDS, "the pasted text")
    assert lib.format == "id list"
    refs = [(e.line, e.ref.arxiv or e.ref.doi or e.ref.openreview) for e in lib.entries]
    assert refs == [
        (1, "2401.01234"),
        (2, "2302.00001"),
        (3, "2105.05233"),
        (4, "10.1145/3394486.3403043"),
        (5, "HkxYz0NFwB"),
    ]
    assert [(s.line, s.reason) for s in lib.skipped] == [
        (6, "unreadable: 'hello' is not a paper id, arXiv id, DOI or link"),
        (7, "duplicate of item 1"),
    ]


def test_pasted_ids_are_numbered_by_place_and_stored_ids_are_taken():
    """A paste is one line: 'line 1' for every reason names nothing. Our own ids (what
    `subscribe like:` takes) are ids too. Breaks tried: numbered by line (all 1: red); only
    arXiv ids, DOIs and links read ('neurips-…' unreadable: red)."""
    lib = parse_library(b"2401.01234 neurips-928c3ba0ef8b hello arXiv:2401.01234", "the text")
    assert [(e.line, e.ref.arxiv or e.ref.paper_id) for e in lib.entries] == [
        (1, "2401.01234"),
        (2, "neurips-928c3ba0ef8b"),
    ]
    assert [(s.line, s.reason[:20]) for s in lib.skipped] == [
        (3, "unreadable: 'hello' "),
        (4, "duplicate of item 1"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2401.01234v3", ("arxiv", "2401.01234")),
        ("https://arxiv.org/abs/hep-th/9901001", ("arxiv", "hep-th/9901001")),
        ("https://doi.org/10.48550/arXiv.2401.01234", ("arxiv", "2401.01234")),
        ("doi:10.1000/XYZ.", ("doi", "10.1000/xyz")),
        ("https://dx.doi.org/10.1000/xyz", ("doi", "10.1000/xyz")),
        ("https://openreview.net/pdf?id=HkxYz0NFwB", ("openreview", "HkxYz0NFwB")),
        ("graph neural networks", None),
        ("syn-sae-3", None),
    ],
)
def test_parse_ref(text, expected):
    ref = parse_ref(text)
    if expected is None:
        assert ref is None
    else:
        assert getattr(ref, expected[0]) == expected[1]


def test_limits_and_unreadable_files_are_clear_errors():
    """Breaks tried: the size check after decoding (a 2 MB file read first; the message then
    names no limit: red)."""
    with pytest.raises(LibraryError, match="the limit is 1 MB"):
        parse_library(b"2401.01234\n" * (MAX_IMPORT_BYTES // 11 + 1), "big.txt")
    with pytest.raises(LibraryError, match="binary"):
        parse_library(b"%PDF-1.7\n\x00\x01\x02 stuff", "paper.pdf")
    with pytest.raises(LibraryError, match="empty"):
        parse_library(b"  \n", "empty.bib")
    with pytest.raises(LibraryError, match="No entries"):
        parse_library(b"% only a comment\n", "x.bib")
    many = "".join(f"@misc{{k{i}, title = {{Paper number {i}}}}}\n" for i in range(MAX_ENTRIES + 3))
    lib = parse_library(many.encode(), "many.bib")
    assert len(lib.entries) == MAX_ENTRIES and lib.read == MAX_ENTRIES + 3
    assert lib.skipped[-1].reason.startswith("over the limit of 1,000 entries")


def test_a_title_that_cleans_to_nothing_is_no_title():
    """50,000 nested braces: the cleaned title has no letters left. Break tried: the cleaned
    title not checked (stored under the empty text's id: red)."""
    bib = (
        "@misc{deep, title={" + "{" * 50_000 + "Deep" + "}" * 50_000 + "}}\n@misc{ok, title={Fine}}"
    )
    lib = parse_library(bib.encode(), "deep.bib")
    assert [e.title for e in lib.entries] == ["Fine"]
    assert [(s.line, s.reason) for s in lib.skipped] == [(1, "no title")]


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_a_file_with_a_unicode_bom_is_read(codec):
    """Windows saves 'Unicode' text as UTF-16 with a BOM (a NUL in every other byte). Break
    tried: no BOM check before the binary check ('looks like a binary file': red)."""
    bib = "@misc{k, title = {Müller's sparse autoencoders}}\n"
    data = bib.encode(codec)
    if codec == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    lib = parse_library(data, "mine.bib")
    assert [e.title for e in lib.entries] == ["Müller's sparse autoencoders"]
    with pytest.raises(LibraryError, match="binary"):
        parse_library(codecs.BOM_UTF16_LE + b"\x01\x00" * 500, "x.bib")
