"""`/papers me zotero …` and `/papers save <id>`: a person's live Zotero library."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.commands.core import Args, Commands, Context, command
from bot.commands.replies import Reply, error
from digest.text.numbers import plural

if TYPE_CHECKING:
    from digest.zotero.service import Person, ZoteroService

#: The private form `zotero connect` asks a platform to open (its fields: library, key).
FORM_ZOTERO = "zotero-connect"
FORM_TITLE = "Connect Zotero"
FORM_FIELDS = (
    ("library", "Zotero user id (or group:ID)", False),
    ("key", "Zotero API key", True),  # secret: never echoed, never in a message
)
NOT_HERE = "Zotero is not set up on this bot."
USAGE = "Use `/papers me zotero connect`, `sync`, `status` or `disconnect`."
TYPED_KEY = (
    "Type `/papers me zotero connect` alone: it asks for your id and API key privately (a key "
    "typed into a command stays in the platform's history). Nothing was stored."
)


def _service(cmds: Commands) -> ZoteroService:
    from digest.errors import DigestError

    if cmds.zotero is None:
        raise DigestError(NOT_HERE)
    return cmds.zotero


def _person(ctx: Context) -> Person:
    from digest.errors import DigestError
    from digest.zotero.service import Person

    if ctx.dm is None:
        raise DigestError("Zotero feeds your personal digest, which is not available here.")
    # One library per person wherever they type: the personal digest's workspace, not the
    # channel's (on Discord one personal digest spans every server).
    return Person(ctx.dm.platform, ctx.dm.workspace, ctx.user, ctx.dm)


@command(
    "zotero",
    "zotero connect|sync|status|disconnect",
    "(also as `me zotero …`) your Zotero library: connect it privately (user id and API key), sync its papers into your "
    "personal digest's `like:` interests (daily, or now), or disconnect (the key is deleted)",
)
def zotero_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    what = args.words[0].lower() if args.words else ""
    zot = _service(cmds)
    who = _person(ctx)
    if what == "connect":
        library, key = args.options.get("library"), args.options.get("key")
        if len(args.words) > 1:
            return error(TYPED_KEY)
        if not zot.available:
            from digest.zotero.secrets import NO_SECRET

            return error(NO_SECRET)
        if not (library and key):
            return Reply(
                text="Connect your Zotero library: give your user id and an API key privately.",
                title=FORM_TITLE,
                form=FORM_ZOTERO,
            )
        from digest.errors import DigestError

        where = zot.connect(who, str(library), str(key))
        head = f"Connected Zotero library {where}; the key is stored encrypted."
        try:
            synced = _synced(zot.sync(who))
        except DigestError as exc:  # connected all the same: the daily sync tries again
            synced = f"The first sync did not run: {exc}"
        return Reply(text=f"{head} {synced}", schedule_changed=ctx.dm)
    if what == "sync":
        return Reply(text=_synced(zot.sync(who)), schedule_changed=ctx.dm)
    if what == "disconnect":
        if zot.disconnect(who):
            return Reply(
                text="Disconnected: your Zotero key is deleted. The `like:` interests it added "
                "stay (`/papers me unsubscribe` removes them)."
            )
        return error("No Zotero library is connected.")
    if what == "status":
        conn = zot.connection(who)
        if conn is None:
            return Reply(text="No Zotero library is connected; `/papers me zotero connect`.")
        when = conn.synced_at.strftime("%Y-%m-%d %H:%M UTC") if conn.synced_at else "never"
        return Reply(
            text=f"Zotero library {conn.library_type}s/{conn.library_id}: last synced {when} "
            f"(library version {conn.version}); it syncs daily."
        )
    return error(USAGE)


def _synced(r: object) -> str:
    from digest.zotero.service import SyncReport

    assert isinstance(r, SyncReport)
    if r.unchanged:
        return f"Zotero library {r.library}: nothing changed since the last sync."
    return (
        f"Synced {r.library}: {plural(r.changed, 'item')} read, "
        f"{plural(r.added, '`like:` interest')} added, {r.removed} removed"
        + (f", {r.skipped} skipped (notes, attachments, untitled)" if r.skipped else "")
        + "."
    )


@command("save", "save <id>", "save a paper to your Zotero library's `digestbot` collection")
def save_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if not args.words:
        return error("Save which paper? e.g. `/papers save 2401.01234`")
    zot = _service(cmds)
    paper, result = zot.save(_person(ctx), args.words[0])
    title = paper.title if len(paper.title) <= 80 else paper.title[:79] + "…"
    if result.existed:
        return Reply(text=f"📚 {title!r} is already in your Zotero library ({result.library}).")
    return Reply(text=f"📚 Saved {title!r} to the `digestbot` collection of {result.library}.")
