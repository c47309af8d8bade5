"""The console writes an attached export to a file and says where (issue 23).

"2 BibTeX entries attached." used to come with no file: the BibTeX was dumped inline and nothing
was written. Now `export` at the console (and `digestbot cmd`) writes the file into the data
folder and prints its path; the file holds exactly what the core attached.

Breaks that turn this red (each tried): apply_reply rendering the reply without save_attachment
(no file, no path); save_attachment keeping the attachment (the BibTeX is dumped inline again);
save_attachment honouring a path in the attachment's name (the file lands outside the folder).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.adapters.console import save_attachment
from bot.cli.channels import apply_reply
from bot.commands import Context
from bot.commands.replies import Reply
from digest.models import ChannelRef

LAB = ChannelRef("console", "lab")


def test_export_is_written_and_its_path_shown(app) -> None:
    ctx = Context(LAB, "ann", is_admin=True)
    app.commands.handle("up syn-sae-1", ctx)
    app.commands.handle("up syn-sae-2", ctx)
    reply = app.commands.handle("export bibtex liked", ctx)
    assert reply.attachment is not None
    shown = asyncio.run(apply_reply(app, reply, ctx))
    folder = app.settings.resolved_index_dir().parent
    written = folder / reply.attachment[0]
    assert written.read_text(encoding="utf-8") == reply.attachment[1]
    assert "2 BibTeX entries attached." in shown and str(written.resolve()) in shown
    assert "@inproceedings{" not in shown  # the path, not the file's text


def test_a_name_with_a_path_stays_in_the_folder(tmp_path: Path) -> None:
    reply = Reply(text="x", attachment=("../../evil.bib", "@misc{a,}"))
    shown = save_attachment(reply, tmp_path / "data")
    assert (tmp_path / "data" / "evil.bib").exists() and not (tmp_path / "evil.bib").exists()
    assert shown.attachment is None
