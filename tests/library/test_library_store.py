"""The store's side of `/papers import` on SQLite and PostgreSQL: finding the papers a library
names, and keeping the library's own papers out of every digest's candidates."""

from digest.ingest.parse import make_record
from digest.models import Links
from digest.store.papers import Wanted

ABSTRACT = "We study graph neural networks and message passing on molecule graphs in depth."


def _papers():
    return [
        make_record(source="arxiv", id="2502.00007v2", title="Trajectory balance", abstract="RL."),
        make_record(
            source="jsonl",
            id="doi-1",
            title="A paper with a DOI link",
            abstract="x",
            links=Links(abs="https://doi.org/10.1000/ABC.123"),
        ),
        make_record(source="openreview", id="HkxYz0NFwB", title="Reward shaping", abstract="y"),
        make_record(
            source="jsonl", id="gnn-1", title="Message Passing, Revisited!", abstract=ABSTRACT
        ),
    ]


def test_find_wanted_by_every_identity(store):
    """Breaks tried: DOIs compared without lower-casing (the DOI entry unmatched: red); a title
    match whose abstracts disagree accepted (a different paper followed: red)."""
    store.papers.upsert(_papers())
    wanted = [
        Wanted(arxiv="2502.00007"),
        Wanted(doi="10.1000/abc.123"),
        Wanted(openreview="HkxYz0NFwB"),
        Wanted(paper_id="gnn-1"),
        Wanted(title="message passing revisited"),
        Wanted(title="Message passing, revisited", abstract="Protein folding with transformers."),
        Wanted(arxiv="2599.00001", doi="10.9/none", title="Nothing like it"),
    ]
    assert store.papers.find_wanted(wanted) == [
        "2502.00007",
        "doi-1",
        "HkxYz0NFwB",
        "gnn-1",
        "gnn-1",
        None,
        None,
    ]


def test_library_papers_are_stored_but_never_news(store):
    """Breaks tried: the `news` filter on `ids_between` only (the backlog pool keeps it: red)."""
    store.papers.upsert(_papers())
    kept = make_record(source="library", title="My own paper", abstract=ABSTRACT + " Mine.")
    store.papers.upsert([kept])
    everything = store.papers.ids_between(0, store.papers.max_seq())
    news = store.papers.ids_between(0, store.papers.max_seq(), news=True)
    assert kept.id in everything and kept.id not in news and len(news) == 4
    assert kept.id in store.papers.recent_ids(10)
    assert kept.id not in store.papers.recent_ids(10, news=True)


NEURIPS = (
    "We propose a sparse mixture of experts for retrieval-augmented generation, in which each "
    "expert indexes a shard of the corpus and a learned router picks the shards a query reads; "
    "on open-domain question answering it matches dense retrieval at a third of the cost."
)


def test_find_wanted_by_the_same_long_abstract(store):
    """A bundled paper has only a derived title: the entry naming it by a real title and the same
    abstract (other case and punctuation) is that paper; a short abstract proves nothing.
    Breaks tried: no abstract lookup (None: the paper stored again as a copy: red); the
    abstract compared unnormalised (red)."""
    bundled = make_record(source="neurips", abstract=NEURIPS)
    short = make_record(source="neurips", abstract="No abstract available.")
    store.papers.upsert([bundled, short])
    assert bundled.title_derived
    wanted = [
        Wanted(title="RAG with Mixtures of Experts", abstract=NEURIPS.upper().replace(";", ",")),
        Wanted(title="Another paper", abstract="No abstract available."),
        Wanted(arxiv="2599.00001", title="An arXiv paper", abstract=NEURIPS),
    ]
    assert store.papers.find_wanted(wanted) == [bundled.id, None, bundled.id]
