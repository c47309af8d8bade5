"""The digestbot CLI for papers: ingest, list, show, search, and one-line errors with exit code 2."""

import json

from bot.cli.main import main
from digest import BUNDLED_PAPERS


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ingest_bundled_list_then_again(env_isolated, capsys):
    code, out, _ = run(capsys, "ingest", str(BUNDLED_PAPERS))
    assert code == 0 and "19 new" in out
    code, out, _ = run(capsys, "ingest", str(BUNDLED_PAPERS))
    assert code == 0 and "0 new" in out and "19 already stored" in out


def test_papers_list_and_show_derived_titles(env_isolated, capsys):
    run(capsys, "ingest", str(BUNDLED_PAPERS))
    code, out, _ = run(capsys, "papers", "list", "--limit", "50")
    assert code == 0 and "TRACE: Temporal Reconstruction Attack on Consecutive Encodings" in out
    assert len(out.strip().splitlines()) == 19
    paper_id = next(line.split()[0] for line in out.splitlines() if "TRACE" in line)
    code, out, _ = run(capsys, "papers", "show", paper_id)
    assert code == 0 and "title derived from the abstract" in out and "gradient-inversion" in out


def test_search_json_and_queries_file(env_isolated, capsys, tmp_path):
    run(capsys, "ingest", str(BUNDLED_PAPERS))
    code, out, _ = run(capsys, "search", "sparse autoencoders", "--json", "--limit", "3")
    result = json.loads(out)
    assert code == 0 and result["query"] == "sparse autoencoders"
    assert result["results"][0]["title"].startswith("Manifold geometry predicts")  # the SAE paper
    assert set(result["results"][0]) >= {"id", "title", "score"}
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": "alignment faking"}\ngrokking\n\n')
    code, out, _ = run(capsys, "search", "--queries-file", str(queries), "--json", "--limit", "2")
    lines = [json.loads(x) for x in out.strip().splitlines()]
    assert code == 0 and [x["query"] for x in lines] == ["alignment faking", "grokking"]
    assert "grokking" in lines[1]["results"][0]["title"].lower() or lines[1]["results"]


def test_errors_are_one_line_with_exit_code_2(env_isolated, capsys, tmp_path):
    cases = [
        ("ingest", str(tmp_path / "missing.jsonl")),
        ("ingest", str(BUNDLED_PAPERS), "--format", "yaml"),
        ("papers", "show", "no-such-id"),
        ("search",),
        (
            "search",
            "",
        ),  # an empty query is a usage error, not an answer (break seen red: check removed)
        ("search", "   "),
        ("search", "x", "--limit", "0"),
        ("search", "--queries-file", str(tmp_path / "none.txt")),
        ("--db", "postgresql://nobody@127.0.0.1:1/none", "papers", "list"),
        ("search", "x", "--no-such-option"),
    ]
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    cases.append(("ingest", str(tmp_path / "blob.bin")))
    for args in cases:
        code, out, err = run(capsys, *args)
        assert code == 2, args
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, (args, err)
        assert "Traceback" not in err + out


def test_search_footer_counts_in_words(env_isolated, capsys):
    """'1 match', not '1 matches'. Break seen red: the footer back to f"{total} matches"."""
    run(capsys, "ingest", str(BUNDLED_PAPERS))
    code, out, _ = run(capsys, "search", "tensor commitments")
    assert code == 0 and out.strip().splitlines()[-1].endswith("· 1 match"), out
    code, _, err = run(capsys, "search", "tensor commitments", "--page", "3")
    assert code == 2 and "1 match on 1 page." in err, err
    code, out, _ = run(capsys, "search", "language models")
    assert out.strip().splitlines()[-1].endswith(" matches"), out


def test_queries_file_works_without_json(env_isolated, capsys, tmp_path):
    """README: plain lines or JSON objects with "query"; one JSON line per query, --json or not."""
    run(capsys, "ingest", str(BUNDLED_PAPERS))
    queries = tmp_path / "q.txt"
    queries.write_text('grokking\n{"query": "alignment faking", "qid": 7}\n')
    code, out, _ = run(capsys, "search", "--queries-file", str(queries), "--limit", "1")
    assert code == 0 and [json.loads(x)["query"] for x in out.splitlines()] == [
        "grokking",
        "alignment faking",
    ]


def test_search_on_an_empty_store_says_what_to_do(env_isolated, capsys):
    code, out, _ = run(capsys, "search", "graphs")
    assert code == 0 and "digestbot ingest" in out


def test_queries_file_refuses_empty_and_non_text_queries(env_isolated, capsys, tmp_path):
    """Repro: `{"query": ""}` searched for nothing and `{"query": 5}` / `null` searched for '5' /
    'None'. Breaks that turn this red: the isinstance check dropped (exit 0, query 'None'); the
    empty check dropped (exit 0); the line number left out of the message."""
    run(capsys, "ingest", str(BUNDLED_PAPERS))
    cases = {
        '{"query": ""}': "'query' is empty",
        '{"query": "   "}': "'query' is empty",
        '{"query": 5}': "'query' must be text in quotes, got a number",
        '{"query": null}': "'query' must be text in quotes, got null",
        '{"query": ["grokking"]}': "'query' must be text in quotes, got a list",
        '{"query": {"q": "x"}}': "'query' must be text in quotes, got an object",
    }
    queries = tmp_path / "q.jsonl"
    for bad, needle in cases.items():
        queries.write_text(f"grokking\n\n{bad}\nalignment\n")
        code, out, err = run(capsys, "search", "--queries-file", str(queries))
        assert code == 2 and not out, (bad, out)  # nothing searched before the file is refused
        assert err.startswith(f"error: {queries}:3: {needle}"), err
        assert len(err.strip().splitlines()) == 1


def test_index_shows_how_many_papers_are_embedded(env_isolated, capsys, monkeypatch):
    """`digestbot index`: the backlog a running bot's worker is embedding, and lexical-only.

    Breaks that turn this red: the progress counting papers without a vector as embedded; the
    command missing from bot/cli/main.py's COMMAND_MODULE (it is then not found quickly)."""
    import digest.index.lifecycle as index_store
    from digest.index.embeddings import ModelConfig
    from tests.fakes.encoders import HashEncoder

    def load(config=None):  # the model's stand-in, switched off as the model is
        return None if (config or ModelConfig.from_env()).off else HashEncoder()

    monkeypatch.setattr(index_store, "load_encoder", load)
    monkeypatch.setenv("DIGESTBOT_SEMANTIC", "off")
    run(capsys, "ingest", str(BUNDLED_PAPERS))  # stored without vectors (semantic off)
    code, out, _ = run(capsys, "index")
    assert code == 0 and out.startswith("papers: 19; meaning: off")
    monkeypatch.setenv("DIGESTBOT_SEMANTIC", "auto")  # switched on for an existing corpus
    code, out, _ = run(capsys, "index")
    assert "embedded: 0 of 19 (0%), waiting for a running bot's embedding worker" in out
    run(capsys, "ingest", str(BUNDLED_PAPERS))  # a one-shot ingest embeds the backlog
    code, out, _ = run(capsys, "index")
    assert "embedded: 19 of 19 (100%)" in out


def test_search_text_shows_each_results_tldr(env_isolated, capsys):
    """`digestbot search` text output shows each result's TL;DR under its line, as docs/tldr.md
    says every card does; the `--json` field holds the same line.

    Breaks that turn this red: `_print_page` without the TL;DR line (only `--json` had it)."""
    run(capsys, "ingest", str(BUNDLED_PAPERS))
    code, out, _ = run(capsys, "search", "sparse autoencoders", "--limit", "3")
    _, js, _ = run(capsys, "search", "sparse autoencoders", "--limit", "3", "--json")
    lines = out.splitlines()
    tldrs = [i for i, line in enumerate(lines) if line.startswith("     TL;DR: ")]
    whys = [i for i, line in enumerate(lines) if line.startswith("     why: ")]
    assert (
        code == 0
        and len(tldrs) == len(whys) == 3
        and all(t < w for t, w in zip(tldrs, whys, strict=True))
    )
    first = " ".join(" ".join(lines[tldrs[0] : whys[0]]).split())
    assert first == "TL;DR: " + json.loads(js)["results"][0]["tldr"]
