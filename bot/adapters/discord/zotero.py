"""Discord's side of Zotero: the connect modal (the command's initial response), its
submission, `/papers me zotero`, `/papers save` and the "📚 Save to Zotero" button."""

from __future__ import annotations

import asyncio
import re
from typing import Any, Literal, cast

import discord

from bot.adapters.deps import Deps
from bot.adapters.discord.interact import guarded, invoke, run
from bot.commands.core import Args
from bot.commands.handlers_zotero import FORM_FIELDS, FORM_TITLE


class ConnectModal(discord.ui.Modal):
    """The library id and the API key (Discord has no masked input; only the person sees the
    modal, and its values reach this app alone, never a channel)."""

    def __init__(self, deps: Deps) -> None:
        super().__init__(title=FORM_TITLE, custom_id="zotero_connect", timeout=600)
        self.deps = deps
        self.fields: dict[str, discord.ui.TextInput] = {}
        for name, label, _secret in FORM_FIELDS:
            box: discord.ui.TextInput = discord.ui.TextInput(
                label=label, custom_id=name, max_length=64, required=True
            )
            self.fields[name] = box
            self.add_item(box)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        values = {n: str(box.value or "") for n, box in self.fields.items()}
        args = Args.typed("connect", library=values["library"], key=values["key"])
        work = run(self.deps, interaction, "zotero", args, personal=True)
        await guarded(interaction, work)


async def zotero(deps: Deps, i: discord.Interaction, action: str) -> None:
    """`/papers me zotero <action>`: connect opens the modal (it must be the first response,
    before any deferral); the rest run as any command."""
    if action != "connect":
        await run(deps, i, "zotero", Args.typed(action), personal=True)
        return
    # No network here (availability and the form only): well inside Discord's 3 seconds.
    reply = await asyncio.to_thread(invoke, deps, i, "zotero", Args.typed("connect"), True)
    if reply.form is not None:
        await i.response.send_modal(ConnectModal(deps))
    else:
        await i.response.send_message(reply.text, ephemeral=True)


#: What `/papers me zotero` does.
Action = Literal["connect", "sync", "status", "disconnect"]


class Save(discord.ui.DynamicItem[discord.ui.Button], template=r"dv:z:(?P<paper>.+)"):
    """📚 Save to Zotero: the paper into the presser's `digestbot` collection, privately."""

    def __init__(self, paper: str) -> None:
        label = "📚 Save to Zotero"
        super().__init__(discord.ui.Button(label=label, custom_id=f"dv:z:{paper}"[:100]))
        self.paper = paper

    @classmethod
    async def from_custom_id(cls, interaction, item, match: re.Match[str]) -> Save:
        return cls(match["paper"])

    async def callback(self, interaction: discord.Interaction) -> None:
        client: Any = interaction.client  # a DigestClient: its wiring
        deps = cast(Deps, client.deps)
        work = run(deps, interaction, "save", Args.typed(self.paper))
        await guarded(interaction, work)
