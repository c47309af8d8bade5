"""`/papers import` through the command core and the command line (issue 25, item 2): a library
file's entries become a channel's `like:` interests, and its first digest is about them."""

import json
import re
from datetime import UTC, date, datetime

import pytest

from bot.cli.library import handle_console
from bot.cli.main import main
from bot.commands import Context
from digest.delivery.backlog import backlog
from digest.models import ChannelRef, SubscriptionKind
from digest.rank.why import title_ref
from tests.support.corpus import synthetic_records

DAY = date(2026, 12, 1)
NEW = ChannelRef("console", "newlab")
SAE = "Sparse autoencoders recover monosemantic dictionary features"
DIFFUSION = "Denoising score matching for image generation"


def three_papers(gnn_title: str) -> str:
    """A BibTeX file of three papers: one stored (by its title), two only in the file."""
    return f"""@article{{mine1,
  title = {{{gnn_title}}},
  author = {{Turing, Alan}},
  year = {{2025}}
}}
@inproceedings{{mine2,
  title = {{{SAE}}},
  author = {{Lovelace, Ada}},
  booktitle = {{NeurIPS}},
  year = {{2025}},
  abstract = {{We train sparse autoencoders (SAEs) with dictionary learning and find interpretable
    features and monosemantic latents; superposition in activations explains feature splitting.}}
}}
@article{{mine3,
  title = {{{DIFFUSION}}},
  journal = {{arXiv preprint arXiv:2501.04321}},
  year = {{2025}},
  abstract = {{Diffusion models trained by denoising score matching improve image generation; we
    study noise schedules, the reverse process and classifier-free guidance.}}
}}
"""


def ctx(channel: ChannelRef = NEW) -> Context:
    return Context(
        channel, "ann", True, ChannelRef("console", "@ann"), datetime(2026, 12, 1, 9, tzinfo=UTC)
    )


def gnn_title(app) -> str:
    return app.store.papers.get("syn-gnn-0").title


def test_a_bibtex_of_three_papers_seeds_a_new_channel_and_its_first_digest(app, tmp_path):
    """The issue's 'done when', on the console: three `like:` interests, a first digest whose
    why-lines name all three, and neither the library's papers nor its stored one offered.

    Breaks tried: `import PATH` not read at the console (`_local_path` None: the path is read
    as an id list, 'No entries found': red); the match by title dropped in `find_wanted` (the
    GNN paper kept as a second copy: red)."""
    bib = tmp_path / "mine.bib"
    bib.write_text(three_papers(gnn_title(app)))
    reply = handle_console(app.commands, f"/papers import {bib}", ctx())
    assert not reply.error, reply.text
    assert reply.text.startswith(
        "Read 3 entries (BibTeX): 1 matched a stored paper, 2 kept from the file's title and "
        "abstract; added 3 `like:` interests, skipped 0."
    )
    subs = app.channels.subscriptions(NEW)
    assert [s.kind for s in subs] == [SubscriptionKind.LIKE] * 3
    liked = [app.store.papers.get(s.text) for s in subs]
    assert [p.title for p in liked] == [gnn_title(app), SAE, DIFFUSION]
    assert liked[0].id == "syn-gnn-0" and liked[2].id == "2501.04321"
    assert {p.source for p in liked[1:]} == {"library"}
    listed = say(app, "list").text
    assert f"2. like: {SAE} ({liked[1].id})" in listed  # by title, not by an opaque id alone

    digest = app.digests.preview(NEW, DAY)
    whys = [item.why for item in digest.items]
    assert digest.items, "a first digest without typing topics"
    for title in (gnn_title(app), SAE, DIFFUSION):
        assert any(f"like {title_ref(title)}" in w for w in whys), (title, whys)
    shown = {item.paper.id for item in digest.items}
    assert not shown & {p.id for p in liked}  # the channel's own papers are not news to it
    assert all(item.paper.source != "library" for item in digest.items)


def test_library_papers_are_never_news_elsewhere(app, tmp_path):
    """Another channel following diffusion never gets a paper someone imported, neither as news
    nor from its backlog. Breaks tried: `news=True` dropped from the candidates (offered: red)
    and from the backlog pool (offered: red)."""
    reply = handle_console(app.commands, "import " + three_papers(gnn_title(app)), ctx())
    assert "added 3" in reply.text
    other = ChannelRef("console", "other")
    app.channels.follows.add(
        other, SubscriptionKind.TOPIC, "denoising score matching image generation"
    )
    ids = {item.paper.id for item in app.digests.preview(other, DAY).items}
    assert ids and "2501.04321" not in ids
    channel = app.channels.channel(other)
    pool = backlog(app.channels, channel, exclude_ids=(), limit=25)
    assert pool.hits and not {h.paper_id for h in pool.hits} & {"2501.04321"}
    assert app.channels.papers.search("denoising score matching").result.total  # still findable


def test_a_channels_own_papers_are_not_offered_to_it(app):
    """Two stored papers of one sub-topic imported: each is like the other, yet neither is news to the channel
    that follows them. Break tried: likes not counted as seen (`Reads.seen`: red)."""
    mine = ("syn-gnnmol-0", "syn-gnnmol-3")  # one sub-topic: each is the other's nearest
    titles = [app.store.papers.get(pid).title for pid in mine]
    bib = "".join(f"@misc{{k{i}, title = {{{t}}}}}\n" for i, t in enumerate(titles))
    assert "added 2" in say(app, "import " + bib).text
    say(app, "size 25")
    shown = {item.paper.id for item in app.digests.preview(NEW, DAY).items}
    assert "syn-gnnmol-6" in shown and not shown & set(mine)


def test_importing_again_adds_nothing_and_says_why(app):
    """Breaks tried: already-followed entries counted as added (red)."""
    text = "import " + three_papers(gnn_title(app))
    handle_console(app.commands, text, ctx())
    again = handle_console(app.commands, text, ctx()).text
    assert again.startswith("Read 3 entries (BibTeX): 3 matched a stored paper; added 0")
    assert again.count("duplicate: already followed here") == 3
    assert len(app.channels.subscriptions(NEW)) == 3


def test_a_large_library_stops_at_the_channels_limit(app):
    """A channel follows at most 50 things: the rest of a long library is skipped, each said.
    Our own export's notes name the stored papers (re-importing another channel's 👍 papers)."""
    say(app, "subscribe graph neural networks")
    ids = [f"syn-{t}-{i}" for t in ("sae", "rl") for i in range(26)]
    bib = "".join(
        f"@misc{{k{i}, title = {{T{i}}}, note = {{digestbot id {p}}}}}\n" for i, p in enumerate(ids)
    )
    text = say(app, "import " + bib).text
    assert text.startswith("Read 52 entries (BibTeX): 52 matched a stored paper; added 49")
    assert "skipped 3." in text and "over the limit: a channel follows at most 50 things" in text
    assert "• and" not in text  # up to five reasons are each named
    assert len(app.channels.subscriptions(NEW)) == 50


def test_an_id_list_matches_stored_papers_and_skips_unknown_ids(app):
    """Pasted ids and links: stored ones are followed; an id of no stored paper has no title to
    keep, so it is skipped with that reason."""
    app.store.papers.upsert([_arxiv_paper()])
    text = (
        "import https://arxiv.org/abs/2502.00007v2 https://openreview.net/forum?id=NoSuchPaper1 "
        "10.9999/none.1 nonsense"
    )
    reply = say(app, text)
    lines = reply.text.splitlines()
    assert lines[0] == (
        "Read 4 entries (id list): 1 matched a stored paper; added 1 `like:` interest, skipped 3."
    )
    assert "no title: NoSuchPaper1 is not a stored paper" in reply.text
    assert "no title: 10.9999/none.1 is not a stored paper" in reply.text
    assert "item 4: unreadable: 'nonsense' is not a paper id, arXiv id, DOI or link" in reply.text
    assert "item 2: no title: NoSuchPaper1 is not a stored paper" in reply.text
    stored = say(app, "import syn-gnn-1, syn-gnn-2 syn-nothing-9").text
    assert "2 matched a stored paper; added 2" in stored, stored
    assert "item 3: no title: syn-nothing-9 is not a stored paper" in stored


def test_ris_and_zotero_csv_through_the_command(app, tmp_path):
    ris = tmp_path / "export.ris"
    ris.write_text(
        f"TY  - JOUR\nTI  - {SAE}\nAB  - sparse autoencoders dictionary learning\nER  -\n"
    )
    assert "Read 1 entry (RIS): 0 matched a stored paper, 1 kept" in say(app, f"import {ris}").text
    csv = tmp_path / "My Library.csv"
    csv.write_text(f'"Key","Title","Abstract Note"\n"K1","{gnn_title(app)}",""\n"K2","",""\n')
    text = say(app, f"import '{csv}'").text
    assert text.startswith("Read 2 entries (CSV): 1 matched a stored paper; added 1")
    assert "line 3: no title" in text


def test_subscribe_like_takes_the_same_ids_and_links(app):
    """`subscribe like:` with an arXiv link, a DOI link and an OpenReview link of stored papers."""
    app.store.papers.upsert([_arxiv_paper()])
    for link in ("https://arxiv.org/pdf/2502.00007v1", "arXiv:2502.00007"):
        assert "papers like *Trajectory balance" in say(app, f"subscribe like:{link}").text
    missing = say(app, "subscribe like:https://doi.org/10.9999/none.1")
    assert missing.error and "No stored paper is '10.9999/none.1'" in missing.text


def test_bad_input_is_one_short_error_and_stores_nothing(app, tmp_path):
    """Breaks tried: the binary check skipped (a PDF read as an id list: 'unreadable' entries
    instead of one error: red)."""
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.7\n\x00\x01\x02\x03 binary")
    for text, said in [
        ("import", "Import what?"),
        (f"import {pdf}", "looks like a binary file"),
        ("import % nothing but a comment", "No entries found"),
    ]:
        reply = say(app, text)
        assert reply.error and said in reply.text and "\n" not in reply.text
    assert app.store.channels.get(NEW) is None or not app.channels.subscriptions(NEW)


def say(app, text: str):
    return handle_console(app.commands, text, ctx())


def _arxiv_paper():
    from digest.ingest.parse import make_record

    return make_record(
        source="arxiv",
        id="2502.00007",
        title="Trajectory balance for reward shaping",
        abstract="Reinforcement learning (RL) with reward shaping and policy gradient methods.",
    )


# -- the command line --------------------------------------------------------------------------


@pytest.fixture
def corpus_file(tmp_path):
    path = tmp_path / "corpus.jsonl"
    rows = [
        {"id": r.id, "title": r.title, "abstract": r.abstract, "authors": list(r.authors)}
        for r in synthetic_records()
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_import_library_on_the_command_line_then_the_first_digest(
    env_isolated, capsys, tmp_path, corpus_file
):
    """`digestbot import-library CHANNEL FILE`, then `digestbot digest … --dry-run --json`: its
    why-lines name the three imported papers; errors are one line with exit code 2."""
    assert run(capsys, "ingest", str(corpus_file))[0] == 0
    title = next(r.title for r in synthetic_records() if r.id == "syn-gnn-0")
    bib = tmp_path / "mine.bib"
    bib.write_text(three_papers(title))
    code, out, _ = run(capsys, "import-library", "console:newlab", str(bib))
    assert code == 0 and "added 3 like: interests, skipped 0." in out and "`" not in out
    code, out, _ = run(capsys, "digest", "console:newlab", "--dry-run", "--json")
    whys = [p["why"] for p in json.loads(out)["papers"]]
    for named in (title, SAE, DIFFUSION):
        assert any(f"like {title_ref(named)}" in w for w in whys), (named, whys)
    code, out, _ = run(capsys, "import-library", "console:newlab", str(bib))
    assert code == 1 and "skipped 3." in out  # all three already followed
    for args, said in [
        (("import-library", "console:newlab", str(tmp_path / "none.bib")), "No such file"),
        (("import-library", "console:newlab", str(tmp_path)), "is not a file"),
        (("import-library", "nowhere", str(bib)), "platform:id"),
    ]:
        code, out, err = run(capsys, *args)
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    pdf = tmp_path / "x.pdf"
    pdf.write_bytes(b"%PDF-1.4\x00\x00")
    code, _, err = run(capsys, "import-library", "console:newlab", str(pdf))
    assert code == 2 and re.match(r"error: x\.pdf looks like a binary file", err)


def test_different_titles_with_one_placeholder_abstract_are_different_papers(app, tmp_path):
    """Exporters write one placeholder for every missing abstract: each titled entry is still its
    own paper. Break tried: the library id from the abstract alone (one paper, 'duplicate of
    another entry': red)."""
    titles = [f"Placeholder study number {n} of library imports" for n in ("one", "two", "three")]
    bib = "".join(
        f"@misc{{k{i}, title = {{{t}}}, abstract = {{No abstract available.}}}}\n"
        for i, t in enumerate(titles)
    )
    text = say(app, "import " + bib).text
    assert text.startswith("Read 3 entries (BibTeX): 0 matched a stored paper, 3 kept"), text
    assert "added 3 `like:` interests, skipped 0." in text
    csv = tmp_path / "zotero.csv"
    rows = "".join(f'"Z{i}","Zotero {t}","Abstract not available"\n' for i, t in enumerate(titles))
    csv.write_text('"Key","Title","Abstract Note"\n' + rows)
    assert "3 kept from the file's title and abstract; added 3" in say(app, f"import {csv}").text
    liked = [s.text for s in app.channels.subscriptions(NEW)]
    assert len(set(liked)) == 6
    assert {app.store.papers.get(pid).title for pid in liked} >= set(titles)


def test_an_entry_with_a_bundled_papers_abstract_is_that_paper(app):
    """Bundled NeurIPS papers have derived titles: the same abstract under the person's own title
    is the stored paper, followed as it is, not stored again as a `library-…` copy. Break tried:
    no abstract match in `find_wanted` ('0 matched … 1 kept': red)."""
    from digest.ingest.parse import make_record
    from tests.library.test_library_store import NEURIPS

    bundled = make_record(source="neurips", abstract=NEURIPS)
    app.store.papers.upsert([bundled])
    bib = f"@inproceedings{{moe, title = {{Sharded experts for RAG}}, abstract = {{{NEURIPS}}}}}"
    text = say(app, "import " + bib).text
    assert text.startswith("Read 1 entry (BibTeX): 1 matched a stored paper; added 1"), text
    assert [s.text for s in app.channels.subscriptions(NEW)] == [bundled.id]


def test_the_skipped_breakdown_counts_each_entry_once():
    """The reasons shown one by one are not counted again in 'and N more (…)'. Break tried: the
    breakdown taken from the unsorted list's tail (over the limit 950, per file 495: red)."""
    from digest.library.entries import Skipped
    from digest.library.seed import ImportReport

    per_file = [Skipped(1001 + i, "over the limit of 1,000 entries per file") for i in range(500)]
    channel = [
        Skipped(51 + i, "over the limit: a channel follows at most 50 things") for i in range(950)
    ]
    report = ImportReport("BibTeX", 1500, matched=1500, added=50, skipped=per_file + channel)
    last = report.summary().splitlines()[-1]
    assert last == (
        "• and 1445 more (over the limit: 945, over the limit of 1,000 entries per file: 500)"
    )
