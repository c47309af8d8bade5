"""`/papers import PATH` at the console and `digestbot cmd`: a text shaped like a path is read as
a file, and what is wrong with it is said (not 'No entries found in the pasted text')."""

from bot.cli.library import handle_console
from tests.library.test_library_import import ctx, gnn_title, three_papers


def test_a_bad_path_says_what_is_wrong_and_public_is_ignored(app, tmp_path, monkeypatch):
    """Breaks that turn it red: `_local_path` back to 'an existing file only' (the missing file
    and the directory read as pasted ids); `--public` kept in the path ('No such file')."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "somedir").mkdir()
    cases = [
        ("~/nonexistent.bib", "No such file: ~/nonexistent.bib"),
        (str(tmp_path / "somedir"), "somedir is not a file"),
        ("./missing/papers.ris", "No such file: ./missing/papers.ris"),
        ("refs.txt", "No such file: refs.txt"),
    ]
    for path, said in cases:
        reply = handle_console(app.commands, f"/papers import {path}", ctx())
        assert reply.error and said in reply.text, (path, reply.text)
    bib = tmp_path / "good.bib"
    bib.write_text(three_papers(gnn_title(app)))
    for typed in (f"/papers import {bib} --public", "/papers import ~/good.bib --public"):
        reply = handle_console(app.commands, typed, ctx())
        assert not reply.error and "Read 3 entries (BibTeX)" in reply.text, reply.text
    pasted = handle_console(app.commands, "/papers import 2501.04321", ctx())
    assert "No such file" not in pasted.text  # ids are still pasted ids
