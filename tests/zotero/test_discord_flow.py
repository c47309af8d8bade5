"""Zotero on Discord, through discord.py's own interaction handling against the strict fake:
`/papers me zotero connect` answers with a modal, its submission connects and syncs, and the
"📚 Save to Zotero" button on a card saves the paper once."""

from __future__ import annotations

import pytest

from tests.fakes.discord_interactions import MODAL_SUBMIT
from tests.support.corpus import synthetic_records
from tests.support.discord_app import (
    _payload,
    _where,
    button,
    discord_bot,
    dispatch,
    embed_text,
    press,
    slash,
)
from tests.zotero.conftest import KEY, USER_LIB

pytestmark = pytest.mark.asyncio


def submitted(token: str, library: str, key: str) -> dict:
    rows = [
        {"type": 1, "components": [{"type": 4, "custom_id": name, "value": value}]}
        for name, value in (("library", library), ("key", key))
    ]
    data = {"custom_id": "zotero_connect", "components": rows}
    return _payload(MODAL_SUBMIT, data, token, _where("111", "77", "42", 16, None))


async def connected(bot) -> str:
    await dispatch(bot.client, slash("me zotero", "z0", action="connect"))
    [modal] = bot.fake.acks["z0"]
    assert modal["type"] == 9 and modal["data"]["custom_id"] == "zotero_connect"
    await dispatch(bot.client, submitted("z1", "475425", KEY))
    return embed_text(bot.fake.followups["z1"][0])


async def test_connect_is_a_modal_and_its_submission_connects(zapp, zotero_fake, monkeypatch):
    """Breaks that turn this red: the command deferred before the modal (Discord refuses a
    modal after a deferral: already acknowledged); no modal listener (the submission is never
    answered); the key in any message sent."""
    p = synthetic_records()[0]
    zotero_fake.add_item(USER_LIB, itemType="journalArticle", title=p.title, creators=[])
    async with discord_bot(zapp, monkeypatch) as bot:
        said = await connected(bot)
        assert "Connected" in said and "1 `like:` interest added" in said, said
        assert bot.fake.acks["z1"][0]["type"] == 5  # deferred: Zotero may take a while
        assert not bot.fake.rejected
        assert KEY not in repr(bot.fake.calls)
    [conn] = zapp.store.zotero.all()
    assert (conn.platform, conn.user_id) == ("discord", "42")


async def test_the_save_button_saves_once(zapp, zotero_fake, monkeypatch):
    """Breaks that turn this red: no Save button in the card's row, or no DynamicItem for it
    (the press is never answered); a second press makes a second item."""
    p = synthetic_records()[0]
    async with discord_bot(zapp, monkeypatch) as bot:
        await connected(bot)
        await dispatch(bot.client, slash("paper", "z2", paper=p.id))
        card = bot.fake.followups["z2"][0]
        save = button(card, "📚 Save to Zotero")
        assert save == f"dv:z:{p.id}"
        for token in ("z3", "z4"):
            await dispatch(bot.client, press(bot.fake, card, save, token))
        assert "Saved" in embed_text(bot.fake.followups["z3"][0])
        assert "already" in embed_text(bot.fake.followups["z4"][0])
        assert not bot.fake.rejected
    assert [i["title"] for i in zotero_fake.library(USER_LIB).items.values()] == [p.title]
