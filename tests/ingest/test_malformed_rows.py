"""Malformed feed rows are said at ingest, each as `file:line: warning: …`, and a value that is
not an http(s) link is never stored or rendered as one (the console showed 'arXiv: not a url').

Breaks that turn this red (each tried): _from_mapping() without _link() (the 'not a url' row is
stored with it as its arXiv link, no warning, and the console prints "arXiv: not a url");
without the one-word title or keyword-list checks (their warnings are missing); paper_url() /
link_actions() not checking is_http() (a link stored before, 'javascript:alert(1)', reaches the
card, and the console prints it); render_text.links_line() not checking (`papers show` prints it).
"""

from __future__ import annotations

import json

from sqlalchemy import update

from bot.adapters.console import render
from bot.cli.main import main
from bot.commands.replies import card
from digest.ingest.parse import keyword_list
from digest.store import Store
from digest.store.schema import PaperRow

ROWS = [
    {
        "id": "good-1",
        "title": "Sparse autoencoders at scale",
        "abstract": "We train sparse autoencoders on activations and find features.",
        "url": "https://arxiv.org/abs/2401.00001",
    },
    {
        "id": "keywords-2",
        "title": "Graph rewiring against oversquashing",
        "abstract": "graph neural networks, oversquashing, rewiring, message passing",
    },
    {
        "id": "oneword-3",
        "title": "Transformers",
        "abstract": "We study attention in transformers and show it generalises.",
    },
    {
        "id": "nolink-4",
        "title": "Diffusion sampling in few steps",
        "abstract": "We distil diffusion models into few-step samplers.",
        "url": "not a url",
        "pdf": "javascript:alert(1)",
    },
]


def test_malformed_rows_warn_with_file_and_line_and_no_bad_link_is_kept(env_isolated, capsys):
    path = env_isolated / "feed.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    assert main(["ingest", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "4 new" in out, out
    assert f"{path}:1:" not in err, err
    assert f"{path}:2: warning: the abstract looks like a list of keywords" in err, err
    assert f"{path}:3: warning: the title 'Transformers' is one word" in err, err
    assert f"{path}:4: warning: url 'not a url' is not an http(s) link: dropped" in err, err
    assert f"{path}:4: warning: pdf 'javascript:alert(1)' is not an http(s) link" in err, err
    assert main(["papers", "show", "nolink-4"]) == 0
    shown = capsys.readouterr().out
    assert "not a url" not in shown and "javascript" not in shown and "arXiv:" not in shown


def test_a_stored_non_link_is_never_rendered(sqlite_store: Store):
    """A paper stored before ingest checked links: its card carries no link, on any adapter."""
    from digest.ingest.parse import parse_jsonl

    sqlite_store.papers.upsert(parse_jsonl(json.dumps(ROWS[0])).records)
    with sqlite_store.engine.begin() as conn:
        conn.execute(update(PaperRow).values(abs_url="not a url", pdf_url="javascript:alert(1)"))
    paper = sqlite_store.papers.get("good-1")
    c = card(paper, feedback=True)
    assert c.url is None and not [a for a in c.actions if a.kind == "link"], c
    from bot.adapters.render_text import links_line

    shown = render_reply_of(c) + links_line(paper)
    assert "not a url" not in shown and "javascript" not in shown


def render_reply_of(c) -> str:
    from bot.commands.replies import Reply

    return render(Reply(text="", cards=(c,)))


def test_keyword_lists_are_told_from_sentences():
    assert keyword_list("deep learning; graph neural networks; attention")
    assert not keyword_list("We study graphs, attention, and transformers. It works.")
    assert not keyword_list("graphs, attention")  # two items: too few to say
    assert not keyword_list("")
