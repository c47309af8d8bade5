"""`/papers import` with a file, as each platform hands one over (issue 25, item 2).

Discord: an attachment option; discord.py fetches it from the CDN URL in the interaction (the
fake CDN serves signed, unexpired URLs only). Slack: slash commands carry no file, so the person
shares the file in the conversation and then types `/papers import`; the bot finds it with
`files.list` and downloads its private URL with the bot token (the fake answers a sign-in page
without one, as Slack does).
"""

from __future__ import annotations

import json

import pytest

from digest.library.entries import MAX_IMPORT_BYTES
from digest.models import ChannelRef, SubscriptionKind
from digest.rank.why import title_ref
from tests.adapters.slack.test_slack_http import Harness, eventually
from tests.fakes.slack import FakeSlack
from tests.library.test_library_import import DIFFUSION, SAE, three_papers
from tests.support.discord_app import (
    DAY,
    SERVER,
    discord_app_bot,  # noqa: F401 - the `bot` fixture
    dispatch,
    embed_text,
    slash,
)

pytestmark = pytest.mark.asyncio


def with_file(payload: dict, attachment: dict) -> dict:
    """`/papers import file:<attachment>` as Discord sends it: the option names the attachment's
    id, and the attachment itself comes in ``data.resolved``."""
    leaf = payload["data"]["options"][-1]
    leaf["options"].append({"type": 11, "name": "file", "value": attachment["id"]})
    payload["data"]["resolved"] = {"attachments": {attachment["id"]: attachment}}
    return payload


def first_digest_names_all_three(app, ref: ChannelRef) -> None:
    titles = (app.store.papers.get("syn-gnn-0").title, SAE, DIFFUSION)
    whys = [item.why for item in app.digests.preview(ref, DAY).items]
    for title in titles:
        assert any(f"like {title_ref(title)}" in w for w in whys), (title, whys)


async def test_discord_attachment_is_fetched_and_imported(bot):
    """Breaks tried: `upload=file` not passed on by the app command (the core answers 'Import
    what?': red); the file read before the deferral (Discord's 3 s pass on a slow CDN; not
    seen here, the fake is fast: not claimed)."""
    data = three_papers(bot.app.store.papers.get("syn-gnn-0").title).encode()
    attachment = bot.fake.attach("mine.bib", data)
    await dispatch(bot.client, with_file(slash("import", "t1"), attachment))
    (answer,) = bot.fake.followups["t1"]
    assert "added 3 `like:` interests, skipped 0." in embed_text(answer)
    assert answer["flags"] & 64  # only the person who imported sees the counts
    assert len(bot.fake.downloads) == 1
    subs = bot.app.channels.subscriptions(SERVER)
    assert [s.kind for s in subs] == [SubscriptionKind.LIKE] * 3
    first_digest_names_all_three(bot.app, SERVER)


async def test_discord_expired_or_oversized_attachments_are_clear_errors(bot):
    """Breaks tried: the size checked after downloading (the fake CDN records the download:
    red); a failed fetch raised (the user hears 'Something went wrong', not what to do: red)."""
    stale = bot.fake.attach("old.bib", b"@misc{k, title={T}}", life=-60)
    await dispatch(bot.client, with_file(slash("import", "t1"), stale))
    big = bot.fake.attach("huge.bib", b"%" * (MAX_IMPORT_BYTES + 1))
    await dispatch(bot.client, with_file(slash("import", "t2"), big))
    old, huge = bot.fake.followups["t1"][0], bot.fake.followups["t2"][0]
    assert "Could not fetch old.bib from Discord; attach it again." in embed_text(old)
    assert "huge.bib is 1.0 MB; the limit is 1 MB." in embed_text(huge)
    assert old["flags"] & 64 and huge["flags"] & 64 and not bot.fake.downloads
    assert bot.app.store.channels.get(SERVER) is None  # nothing set up, nothing stored


async def test_discord_attachment_larger_than_it_says_is_refused(bot):
    """Discord's stated size is not trusted: at most the limit + 1 bytes are read. Break that
    turns it red: `file.read()` back (the whole file read; its text imported or 'No entries')."""
    liar = bot.fake.attach("liar.bib", b"%" * (MAX_IMPORT_BYTES + 10))
    liar["size"] = 100
    await dispatch(bot.client, with_file(slash("import", "t1"), liar))
    answer = embed_text(bot.fake.followups["t1"][0])
    assert "liar.bib is over the limit of 1 MB." in answer, answer
    assert bot.app.store.channels.get(SERVER) is None


async def test_discord_pasted_ids_need_no_file(bot):
    await dispatch(bot.client, slash("import", "t1", text="https://arxiv.org/abs/2599.00001 x"))
    text = embed_text(bot.fake.followups["t1"][0])
    assert "No entries found in the pasted text" not in text  # one id was readable
    assert "no title: 2599.00001 is not a stored paper" in text


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        yield fake


SLACK = ChannelRef("slack", "C1", "T1")


async def test_slack_import_takes_the_file_shared_just_before(app, slack):
    """Breaks tried: the download without the bot token (the fake's sign-in page: red); the
    newest file of anyone in the channel (bea's later file taken: red)."""
    data = three_papers(app.store.papers.get("syn-gnn-0").title).encode()
    slack.share_file("C1", "U1", "old.bib", b"@misc{k, title={Old}}", age=7200)  # too old
    slack.share_file("C1", "U1", "mine.bib", data, age=30)
    slack.share_file("C1", "U2", "beas.ris", b"TY  - JOUR\nTI  - Not mine\nER  -\n")
    async with Harness(app, slack) as h:
        await h.done("import")
    (answer,) = slack.responses()
    assert "added 3 `like:` interests, skipped 0." in answer["text"]
    assert answer["response_type"] == "ephemeral"
    assert slack.fetched == ["FU12"]
    listed = next(a for m, a in slack.calls if m == "files.list")
    assert listed["channel"] == "C1" and listed["user"] == "U1"
    first_digest_names_all_three(app, SLACK)


async def test_slack_sends_the_bot_token_only_to_slack_hosts(app, slack):
    """A file whose private URL is on another host is refused before any request, so the bot
    token never leaves for it. Break that turns it red: the host check dropped (the fake, reached
    as `localhost`, gets the token and serves the file: fetched)."""
    from bot.adapters.slack.uploads import _slack_host

    shared = slack.share_file("C1", "U1", "mine.bib", b"@misc{k, title={T}}")
    for key in ("url_private", "url_private_download"):
        shared[key] = shared[key].replace("127.0.0.1", "localhost")
    async with Harness(app, slack) as h:
        await h.done("import")
    (answer,) = slack.responses()
    assert "The download link of mine.bib is not Slack's" in answer["text"], answer["text"]
    assert not slack.fetched
    api = "https://slack.com/api/"
    assert _slack_host("https://files.slack.com/files-pri/T1-F1/download/a.bib", api)
    assert not _slack_host("http://files.slack.com/files-pri/T1-F1/a.bib", api)  # no TLS
    assert not _slack_host("https://files.slack.com.evil.example/a.bib", api)


async def test_slack_without_a_file_or_the_scope_says_what_to_do(app, slack):
    """No file shared: how to share one. An app installed without files:read: which scope the
    admin must add. A pasted list needs no file at all."""
    async with Harness(app, slack) as h:
        await h.done("import")
        slack.share_file("C1", "U1", "mine.bib", b"@misc{k, title={T}}")
        slack.scopes.clear()
        await h.done("import")
        await h.done("import 2599.00001")
    none, scope, pasted = slack.responses()
    assert none["text"].startswith("No file of yours shared here in the last hour.")
    assert "files:read" in scope["text"] and "reinstalls" in scope["text"]
    assert "no title: 2599.00001 is not a stored paper" in pasted["text"]
    assert not slack.fetched and all(r["response_type"] == "ephemeral" for r in slack.responses())


async def test_slack_a_token_slack_refuses_gets_the_sign_in_page_not_the_file(app, slack):
    """The private URL with a token Slack does not accept redirects to a sign-in page: the user
    is told, and the HTML is never read as a library. Break tried: following redirects and
    reading the page (an 'id list' of HTML words: red)."""
    slack.tokens = {"xoxb-other"}
    slack.share_file("C1", "U1", "mine.bib", b"@misc{k, title={T}}")
    async with Harness(app, slack) as h:
        await h.done("import")
    (answer,) = slack.responses()
    assert "Slack would not hand over mine.bib (HTTP 302)" in answer["text"]
    assert app.store.channels.get(SLACK) is None
    assert json.dumps(answer).count("Read ") == 0


async def test_slack_a_file_sent_to_the_app_with_import_seeds_the_personal_digest(app, slack):
    """In a DM with the app, a file sent with the words `import` is read through `files.info`
    (the event names the file) into the personal digest; a file sent without them is nobody's
    command. Breaks tried: file_share messages still dropped as 'subtype' (no answer: red)."""
    im = slack.open_im("U1")
    data = three_papers(app.store.papers.get("syn-gnn-0").title).encode()
    quiet = slack.share_file(im, "U1", "notes.txt", b"2401.01234")
    mine = slack.share_file(im, "U1", "mine.bib", data)
    event = {
        "type": "message",
        "channel_type": "im",
        "user": "U1",
        "channel": im,
        "subtype": "file_share",
        "ts": "1.1",
    }
    async with Harness(app, slack) as h:
        await h.event({**event, "text": "", "files": [{"id": quiet["id"]}]}, event_id="Ev1")
        await h.event({**event, "text": "import", "files": [{"id": mine["id"]}]}, event_id="Ev2")
        await eventually(lambda: slack.posts(im))
    (answer,) = slack.posts(im)
    assert "added 3 `like:` interests, skipped 0." in answer["text"]
    assert slack.fetched == [mine["id"]]
    assert any(m == "files.info" and a["file"] == mine["id"] for m, a in slack.calls)
    personal = ChannelRef("slack", "@U1", "T1")
    assert len(app.channels.subscriptions(personal)) == 3
