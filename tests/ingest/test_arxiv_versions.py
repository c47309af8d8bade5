"""An arXiv paper's versions are one paper, whichever source format names them."""

import json

from digest.ingest.pipeline import ingest

V1 = "The first version: we count sheep with a convolutional network on farm images."
V2 = "The second version: we count sheep and goats with a vision transformer on farm video."


def _jsonl(path, *rows: dict) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_versioned_ids_without_a_link_are_one_paper_with_the_newest_text(store, tmp_path):
    """`2611.00002v1` and `…v2` in one JSONL file are one paper holding v2's text, reported as an
    update; v1 sent again later leaves v2 in place. Breaks that turn this red: _to_row keeping the
    record id for non-arXiv sources (two papers); _replaces letting an older version win; the
    version not parsed from the id (arxiv_ref)."""
    both = _jsonl(
        tmp_path / "a.jsonl",
        {"id": "2611.00002v1", "title": "Counting Sheep", "abstract": V1},
        {"id": "2611.00002v2", "title": "Counting Sheep and Goats", "abstract": V2},
    )
    report = ingest(store, both)
    assert (report.added, report.updated, store.papers.count()) == (1, 1, 1)
    paper = store.papers.get("2611.00002v1")
    assert (paper.id, paper.title, paper.abstract) == ("2611.00002", "Counting Sheep and Goats", V2)
    old = _jsonl(
        tmp_path / "b.jsonl", {"id": "2611.00002v1", "title": "Counting Sheep", "abstract": V1}
    )
    again = ingest(store, old)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 1)
    assert store.papers.get("2611.00002").abstract == V2


def test_a_newer_version_by_its_link_updates_text_and_link_and_an_older_one_does_not(
    store, tmp_path
):
    """Records with other ids but arxiv.org/abs/…vN links: v2 after v1 replaces title, abstract and
    link and is counted as updated (the reviewer saw "1 already stored" and v1's text); v1 after
    v2 changes nothing. Breaks that turn this red: _replaces requiring the same record id; the
    links not replaced for a newer version in _update; versions compared the wrong way round."""
    url = "https://arxiv.org/abs/2611.00003"
    v1 = {"id": "a", "title": "Counting Sheep", "abstract": V1, "url": url + "v1"}
    v2 = {"id": "b", "title": "Counting Sheep and Goats", "abstract": V2, "url": url + "v2"}
    first = ingest(store, _jsonl(tmp_path / "1.jsonl", v1))
    second = ingest(store, _jsonl(tmp_path / "2.jsonl", v2))
    assert (first.added, second.added, second.updated) == (1, 0, 1)
    paper = store.papers.get("a")
    assert (paper.title, paper.abstract, paper.links.abs) == (v2["title"], V2, url + "v2")
    late = ingest(store, _jsonl(tmp_path / "3.jsonl", {**v1, "id": "c"}))
    assert (late.added, late.updated) == (0, 0) and store.papers.count() == 1
    paper = store.papers.get("a")
    assert (paper.abstract, paper.links.abs) == (V2, url + "v2")


def test_a_paper_is_found_by_the_title_of_its_newest_version(store, tmp_path):
    """After v2 renamed the paper, the OpenReview record carrying v2's title joins it in the
    same ingest or later. Breaks that turn this red: the lookup keys not refreshed after an
    update (the new title was unknown, so a second paper was stored)."""
    rows = (
        {"id": "2611.00004v1", "title": "Counting Sheep", "abstract": V1},
        {"id": "2611.00004v2", "title": "Counting Sheep and Goats", "abstract": V2},
    )
    note = {
        "id": "OR5",
        "title": "Counting sheep and goats",
        "abstract": V2.replace("The second version: we", "We"),
        "venue": "ICLR 2027 poster",
        "url": "https://openreview.net/forum?id=OR5",
    }
    report = ingest(store, _jsonl(tmp_path / "a.jsonl", *rows, note))
    assert (report.added, report.updated, report.merged) == (1, 1, 1)
    paper = store.papers.get("2611.00004")
    assert paper.venue == "ICLR 2027 poster" and paper.links.forum.endswith("id=OR5")


def test_two_arxiv_papers_with_one_abstract_stay_two_and_keep_their_links(store):
    """An identical abstract does not join two arXiv papers (so 2611.00006's v2 never counts as
    a newer version of 2611.00005). Breaks that turn this red: the hash match in Keys.find
    without _compatible (2611.00006v2 merged into 2611.00005: a paper lost)."""
    from digest.ingest.parse import make_record
    from digest.models import Links

    text = V1 * 4  # long enough for the abstract hash to count as identity
    a, b = (
        make_record(
            source="arxiv",
            id=f"2611.0000{n}v{n - 4}",
            title=f"Paper {n} Of Two Here",
            abstract=text,
            links=Links(abs=f"https://arxiv.org/abs/2611.0000{n}"),
        )
        for n in (5, 6)
    )
    store.papers.upsert([a])
    assert store.papers.upsert([b]).added == 1
    assert store.papers.get("2611.00005").links.abs == "https://arxiv.org/abs/2611.00005"


def test_an_explicit_older_version_never_replaces_a_text_of_unknown_version(store):
    """Rows stored before migration 0006 have no version number. v1 arriving later, with the same
    (v1) date arXiv feeds give every version, leaves the stored text alone and does not stamp it
    "v1" (else a later v2 record could not be told apart); v2 with an equal date changes nothing
    either; v2 with a later date replaces it. Breaks that turn this red: _replaces falling back to
    "same id replaces" for an unknown stored version; _beats_unknown_version accepting equal dates
    or v1; _merge filling arxiv_version on a row that already has its arXiv id."""
    from datetime import date

    from digest.ingest.parse import make_record

    day = date(2026, 11, 2)
    legacy = make_record(source="arxiv", id="2611.00009", title="Sheep", abstract=V2, published=day)
    store.papers.upsert([legacy])

    def send(version: int, abstract: str, published: date):
        rec = make_record(
            source="arxiv",
            id=f"2611.00009v{version}",
            title="Sheep",
            abstract=abstract,
            published=published,
        )
        return store.papers.upsert([rec])

    counts = send(1, V1, day)
    assert (counts.updated, store.papers.get("2611.00009").abstract) == (0, V2)
    assert send(2, V1 + " Revised.", day).updated == 0
    assert store.papers.get("2611.00009").abstract == V2
    assert send(1, V1, date(2026, 11, 20)).updated == 0  # v1 is never newer, whatever its date
    counts = send(3, V1 + " Third.", date(2026, 12, 1))
    assert (counts.updated, store.papers.get("2611.00009").abstract) == (1, V1 + " Third.")
    assert send(2, V2, date(2026, 12, 5)).updated == 0  # v3 is now known: v2 is older
