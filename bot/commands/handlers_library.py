"""`/papers import`: a channel's interests seeded from someone's own papers (each a `like:`)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.core import Args, Commands, Context, command
from bot.commands.replies import Reply, error
from digest.text.characters import has_visible

# digest.library.entries (its BibTeX, RIS and CSV parsers) loads with an import: every command registers
# this module, and `/papers list` must not pay for the parsers.


def how_to() -> str:
    """What `import` with nothing to import says (each platform's adapter brings the file itself)."""
    from digest.library.entries import FORMATS

    return (
        f"Import what? Send {FORMATS}: attach the file to `/papers import` (Discord: the `file` "
        "option; Slack: share it here first, then type `/papers import`; console: "
        "`/papers import PATH`), or paste ids, links or BibTeX after `/papers import`."
    )


@dataclass(frozen=True)
class Upload:
    """A file someone shared with `/papers import`, as their platform's adapter fetched it."""

    name: str
    data: bytes

    def __str__(self) -> str:  # how the core's text checks see it: the name, not the bytes
        return self.name


@command(
    "import",
    "import <file | pasted ids, links or BibTeX>",
    "follow papers like your own: each entry of a BibTeX, RIS or Zotero CSV export, or each "
    "arXiv id, DOI or arXiv/OpenReview/DOI link, becomes a `like:`",
    True,
)
def import_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    upload = args.options.get("file")
    if isinstance(upload, Upload):
        data, name = upload.data, upload.name
    elif has_visible(args.raw):
        data, name = args.raw.encode("utf-8"), "the pasted text"
    else:
        return error(how_to())
    from digest.library.formats import parse_library

    library = parse_library(data, name)  # a LibraryError is the reply (the core catches it)
    report = cmds.imports.import_library(ctx.ref, library, ctx.user)
    return Reply(text=report.summary(), schedule_changed=ctx.ref)
