"""The weekly picture through each platform's upload flow, against the strict fakes.

Slack: files.getUploadURLExternal, the bytes POSTed to the upload URL, files.completeUploadExternal
(files:write). Discord: one message, multipart ``files[0]`` + ``payload_json.attachments``.
Console and `digestbot cmd … "/papers stats"`: a file written and its path printed.
"""

from __future__ import annotations

import asyncio
import io
import json
from datetime import timedelta
from pathlib import Path

import discord
import httpx
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.console import ConsoleAdapter
from bot.adapters.discord.poster import DiscordPoster
from bot.adapters.slack.poster import SlackPoster
from digest.models import ChannelRef, DeliveryState
from digest.store import Store
from digest.weekly.picture import WeeklyPictures
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.support.cli_proc import digestbot
from tests.support.corpus import synthetic_records
from tests.weekly.test_weekly_picture import (
    AFTER,
    MONDAY,
    assert_png,
    lapse,
    picture,
    seed,
    sender,
)

POSTED = "posted the weekly picture"


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        fake.join("C1")
        yield fake


def slack_poster(slack: FakeSlack) -> SlackPoster:
    async def lookup(team: str) -> str:
        return "xoxb-test"

    return SlackPoster(lookup, base_url=slack.url, min_interval=0)


def test_the_weekly_picture_reaches_slack_once_through_the_upload_flow(app, slack):
    """Breaks tried: posting the PNG as text through chat.postMessage (no upload: red); no
    alt_txt (red); a second process's sweep sending it again (two files: red)."""
    ch = seed(app.store, ChannelRef("slack", "C1", "T1"))
    done = asyncio.run(sender(app, {"slack": slack_poster(slack)}).sweep())
    assert done == {str(ch.id): POSTED}
    flow = [m for m, _ in slack.calls]
    # The channel's first message ever: its newest message is read first, so a lookup after a
    # lost answer is bounded by Slack's clock (docs/reliability.md), then the three upload steps.
    assert flow == [
        "conversations.history",
        "files.getUploadURLExternal",
        "upload-F1",
        "files.completeUploadExternal",
    ]
    (shared,) = slack.shared_files("C1")
    assert_png(shared["bytes"])
    pic = WeeklyPictures(app.store).picture(ch, MONDAY - timedelta(weeks=1))
    assert shared["alt_txt"] == pic.alt and shared["comment"] == pic.title
    assert shared["name"] == f"weekly-{MONDAY - timedelta(weeks=1)}.png"
    assert asyncio.run(sender(app, {"slack": slack_poster(slack)}, "w2").sweep()) == {}
    assert len(slack.shared_files("C1")) == 1 and slack.refusals == []
    assert picture(app.store, ch.id).status == DeliveryState.POSTED


def test_without_files_write_the_picture_fails_with_the_reason(app, slack):
    """The manifest's scopes are the token's; without files:write Slack answers missing_scope,
    and the week is settled as failed with the scope named (never retried all week).
    Breaks tried: the fake ignoring scopes (posted: red); treating missing_scope as passing
    (retrying: red)."""
    slack.scopes.discard("files:write")
    ch = seed(app.store, ChannelRef("slack", "C1", "T1"))
    done = asyncio.run(sender(app, {"slack": slack_poster(slack)}).sweep())
    assert "files:write" in done[str(ch.id)] and done[str(ch.id)].startswith("failed")
    assert slack.shared_files("C1") == []
    pic = picture(app.store, ch.id)
    assert pic.status == DeliveryState.FAILED and "files:write" in pic.last_error
    assert not app.store.channels.by_id(ch.id).paused  # the digests go on


def test_a_passing_slack_error_is_retried_later_and_sent_once(app, slack):
    """A 500 on the first step: nothing was shared, so the claim waits and is tried again
    (by any process) once its wait is over. Break tried: failing on transient errors (red)."""
    ch = seed(app.store, ChannelRef("slack", "C1", "T1"))
    slack.fail[("files.getUploadURLExternal", "")] = [
        (500, {}, {"ok": False, "error": "internal_error"})
    ]
    first = asyncio.run(sender(app, {"slack": slack_poster(slack)}).sweep())
    assert first[str(ch.id)].startswith("retrying at")
    other = sender(app, {"slack": slack_poster(slack)}, "w2")
    assert asyncio.run(other.runner.recover()) == []  # waiting
    lapse(app.store)
    assert asyncio.run(other.runner.recover()) == [POSTED]
    assert len(slack.shared_files("C1")) == 1


def test_the_slack_fake_refuses_what_slack_refuses(slack):
    """Unknown file id, bytes that differ from the declared length, a .png that is not a PNG,
    an upload id used twice, an upload to an unknown id (404)."""

    async def go() -> list[str]:
        client = AsyncWebClient(token="xoxb-test", base_url=slack.url)
        errors = []

        async def error(**kwargs) -> str:
            try:
                await client.files_completeUploadExternal(channel_id="C1", **kwargs)
            except SlackApiError as exc:
                return exc.response["error"]
            return "ok"

        errors.append(await error(files=[{"id": "F999", "title": "x"}]))
        for name, data, declared in (
            ("a.png", b"\x89PNG\r\n\x1a\nxx", 99),
            ("b.png", b"GIF89a", 6),
        ):
            got = await client.files_getUploadURLExternal(filename=name, length=declared)
            async with httpx.AsyncClient() as http:
                assert (await http.post(got["upload_url"], content=data)).status_code == 200
            errors.append(await error(files=[{"id": got["file_id"], "title": name}]))
        good = b"\x89PNG\r\n\x1a\n" + b"x" * 10
        got = await client.files_getUploadURLExternal(filename="c.png", length=len(good))
        async with httpx.AsyncClient() as http:
            await http.post(got["upload_url"], content=good)
            errors.append(await error(files=[{"id": got["file_id"], "title": "c"}]))
            errors.append(await error(files=[{"id": got["file_id"], "title": "c"}]))
            errors.append(str((await http.post(got["upload_url"], content=good)).status_code))
        return errors

    assert asyncio.run(go()) == [
        "file_not_found",
        "file_size_mismatch",
        "invalid_file_type",
        "ok",
        "file_not_found",
        "404",
    ]


@pytest.fixture
def fake(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(discord.http.Route, "BASE", f.base)
        yield f


def run_discord(coro_factory):
    async def go():
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            return await coro_factory(DiscordPoster(client))
        finally:
            await client.close()

    return asyncio.run(go())


def test_the_weekly_picture_reaches_discord_as_an_attachment(app, fake):
    """Breaks tried: a file without description (alt text lost: red); attachments naming id 1
    for files[0] (the fake's 50035: red); no Attach Files permission posting anyway (red)."""
    ch = seed(app.store, ChannelRef("discord", "111", "77"))
    done = run_discord(lambda poster: sender(app, {"discord": poster}).sweep())
    assert done == {str(ch.id): POSTED}
    (msg,) = fake.arrived("111")
    (att,) = fake.files[msg["id"]]
    assert_png(att["data"])
    assert att["content_type"] == "image/png" and att["filename"].endswith(".png")
    assert (
        att["description"].startswith("Papers matched per interest") and "👍" in att["description"]
    )
    assert "Weekly picture for #lab" in msg["content"]
    assert picture(app.store, ch.id).status == DeliveryState.POSTED
    other = seed(app.store, ChannelRef("discord", "222", "77"))
    fake.no_attach.add("222")
    app.store.channels.update(ch.id, weekly=False)
    done = run_discord(lambda poster: sender(app, {"discord": poster}, "w2").sweep())
    assert done[str(other.id)].startswith("failed: Discord error missing access"), done
    assert fake.arrived("222") == []


def test_the_discord_fake_refuses_what_discord_refuses(fake):
    """Attachment ids that name no file, files over 25 MiB, a .png that is not a PNG."""
    png = b"\x89PNG\r\n\x1a\n" + b"x" * 100

    def post(payload: dict, files: dict) -> tuple[int, int]:
        form = {"payload_json": json.dumps(payload)}
        r = httpx.post(f"{fake.base}/channels/111/messages", data=form, files=files, timeout=60)
        return r.status_code, r.json().get("code", 0)

    one = {"content": "x", "attachments": [{"id": 1, "filename": "a.png"}]}
    assert post(one, {"files[0]": ("a.png", io.BytesIO(png))}) == (400, 50035)
    ok = {"content": "x", "attachments": [{"id": 0, "filename": "a.png", "description": "alt"}]}
    assert post(ok, {"files[0]": ("a.png", io.BytesIO(b"not a png"))}) == (400, 50035)
    big = png + b"\0" * (25 * 1024 * 1024)
    assert post(ok, {"files[0]": ("a.png", io.BytesIO(big))}) == (413, 40005)
    assert post(ok, {"files[0]": ("a.png", io.BytesIO(png))})[0] == 200
    assert len(fake.arrived("111")) == 1


def test_the_console_writes_the_picture_and_prints_its_path(app, tmp_path):
    out = io.StringIO()
    console = ConsoleAdapter(out, pictures=tmp_path / "pics")
    ch = seed(app.store, ChannelRef("console", "lab"))
    assert asyncio.run(sender(app, {"console": console}).sweep()) == {str(ch.id): POSTED}
    path = Path(out.getvalue().split("Picture: ", 1)[1].strip())
    assert path.parent == (tmp_path / "pics").resolve() and path.name.startswith("lab-weekly-")
    assert_png(path.read_bytes())
    assert "Papers matched per interest" in out.getvalue()


def test_stats_from_the_command_line_writes_the_picture(tmp_path):
    """`digestbot cmd console:lab "/papers stats"`: the text, then the path of the PNG written."""
    assert (
        digestbot(tmp_path, "cmd", "console:lab", "/papers subscribe diffusion models").returncode
        == 0
    )
    store = Store.open(f"sqlite:///{tmp_path / 'cli.db'}")
    store.papers.upsert(synthetic_records()[:20])
    seed(store, ChannelRef("console", "lab"), ("diffusion models", "graph neural networks"))
    store.close()
    proc = digestbot(tmp_path, "cmd", "console:lab", "/papers stats")
    assert proc.returncode == 0, proc.stderr
    assert "Picture: Papers matched per interest" in proc.stdout
    path = Path(proc.stdout.split("Picture written to ", 1)[1].split()[0])
    assert_png(path.read_bytes())


def test_two_channels_stats_in_one_data_folder_make_two_files(app, tmp_path):
    """console:lab and console:lab3 answering `stats` into the same folder keep both pictures,
    each named for its channel. Break tried: the stats file name without the channel (the
    second picture replaces the first: red)."""
    from bot.adapters.console import save_attachment
    from bot.commands import Context

    folder = tmp_path / "data"
    written = []
    for ref in (ChannelRef("console", "lab"), ChannelRef("console", "lab3")):
        seed(app.store, ref)
        reply = app.commands.handle("stats", Context(ref=ref, user="ann", now=AFTER))
        said = save_attachment(reply, folder).text
        written.append(Path(said.split("Picture written to ", 1)[1].split()[0]))
    assert [p.name for p in written] == [
        f"weekly-console_lab-{MONDAY}.png",
        f"weekly-console_lab3-{MONDAY}.png",
    ]
    assert sorted(folder.iterdir()) == sorted(written)
    for path in written:
        assert_png(path.read_bytes())


def test_the_composition_root_runs_weekly_sends_as_their_own_job(app):
    """`run`'s scheduler carries a `weekly` job over every adapter that can share a picture.
    Break tried: not adding the job in App.scheduler (red)."""
    app.out = io.StringIO()  # the console prints here, not into the test's output
    scheduler = app.scheduler
    job = scheduler.scheduler.get_job("weekly")
    assert job is not None and job.trigger.interval == timedelta(minutes=10)
    assert job.func.__self__.runner is app.runner and set(app.runner.adapters) == {"console"}


async def test_stats_in_slack_uploads_the_picture_with_its_alt_text(app, slack):
    """`/papers stats --public`: the PNG is shared in the channel through the upload flow, with
    the alt text; without `--public` it goes to the person's DM with the app. Break tried:
    send_file ignoring `image` (no file: red)."""
    from tests.adapters.slack.test_slack_http import Harness

    seed(app.store, ChannelRef("slack", "C1", "T1"))
    async with Harness(app, slack) as h:
        await h.done("stats --public")
        await h.done("stats")
    shared = slack.shared_files("C1")
    (dm,) = slack.shared_files("DU1")
    assert len(shared) == 1 and shared[0]["alt_txt"].startswith("Papers matched per interest")
    assert_png(shared[0]["bytes"])
    assert_png(dm["bytes"])
    assert "Sent as weekly-" in json.dumps(slack.responses()[-1])


async def test_stats_in_discord_attaches_the_picture_with_its_alt_text(app, monkeypatch):
    """The answer to `/papers stats` carries the PNG as an attachment whose description is the
    alt text. Break tried: embeds.attachment ignoring `image` (red)."""
    from tests.support.discord_app import discord_bot, dispatch, slash

    seed(app.store, ChannelRef("discord", "111", "77"))
    async with discord_bot(app, monkeypatch) as b:
        await dispatch(b.client, slash("stats", "tok-stats"))
        ((att,),) = b.fake.followup_files
    assert_png(att["data"])
    assert att["description"].startswith("Papers matched per interest")


def _once_on_complete(kind: str):
    """A chaos rule: Slack answers ``kind`` ("500-stored": shared, then 500; "500": not
    shared; "drop": shared, no answer) to the first files.completeUploadExternal only."""
    left = [kind]

    def chaos(method: str, args: dict) -> str | None:
        return left.pop() if method == "files.completeUploadExternal" and left else None

    return chaos


@pytest.mark.parametrize("fault", ["500-stored", "drop", "500"])
def test_an_unsure_last_upload_step_is_looked_up_then_finished_once(app, slack, fault):
    """Slack answers the step that shares the file with a 500 or not at all, having shared it
    ("500-stored", "drop") or not ("500"). The picture waits for its retry, as a digest message
    does; the retry looks the file up by its name first: the one shared is confirmed, one not
    shared is uploaded once. One picture, posted, every time.

    Breaks that turn this red: the 5xx taken as a refusal (failed, no picture for "500"); no
    lookup before the retry's upload (two pictures for "500-stored" and "drop"); the lookup
    not bounded to the channel (files.list without ``channel``: another channel's file of the
    same week would count)."""
    slack.chaos = _once_on_complete(fault)
    ch = seed(app.store, ChannelRef("slack", "C1", "T1"))
    other = seed(app.store, ChannelRef("slack", "C2", "T1"))
    slack.join("C2")  # its picture of the same week, shared under the same name
    poster = slack_poster(slack)
    poster.timeout = 1  # a dropped answer is given up on quickly
    first = asyncio.run(sender(app, {"slack": poster}).sweep())
    assert first[str(ch.id)].startswith("retrying at") and first[str(other.id)] == POSTED
    lapse(app.store)
    assert asyncio.run(sender(app, {"slack": slack_poster(slack)}, "w2").runner.recover()) == [
        POSTED
    ]
    assert len(slack.shared_files("C1")) == 1 and slack.injected[fault] == 1
    uploads = [m for m, _ in slack.calls].count("files.getUploadURLExternal")
    assert uploads == (3 if fault == "500" else 2)  # C2's one, and C1's once (twice: not shared)
    pic = picture(app.store, ch.id)
    assert pic.status == DeliveryState.POSTED
    (shared,) = [f for f, u in slack.uploads.items() if u.get("channel") == "C1"]
    assert app.store.ledger.messages(pic.id)[0].message_ref == f"C1:{shared}"


class Killed(BaseException):
    """The process dies here (as kill -9 would: nothing after it runs, no handler records)."""


@pytest.mark.parametrize("shared", [True, False])
def test_a_picture_whose_process_died_mid_upload_is_looked_up_and_finished(app, slack, shared):
    """The process dies during the upload: after Slack shared the file (``shared``) or before
    the last step. The picture stays `sending`; once its lease lapses any process takes it over,
    looks it up (files.list, by its name, since the channel's last earlier message) and
    confirms the one Slack has, or uploads it once: one picture either way, posted.

    Breaks that turn this red: the take-over skipping pictures (`kinds` without weekly: stays
    sending); no lookup for an image (`find_part` returning None: two pictures); the lookup
    by a name the upload does not use (two pictures); confirming without looking (nothing
    shared when the process died before the last step: posted but no picture)."""
    ch = seed(app.store, ChannelRef("slack", "C1", "T1"))
    dying = slack_poster(slack)
    upload = dying.upload_image

    async def die(*args, **kwargs):
        if shared:
            await upload(*args, **kwargs)
        raise Killed

    dying.upload_image = die  # type: ignore[method-assign]
    with pytest.raises(Killed):
        asyncio.run(sender(app, {"slack": dying}).sweep())
    assert picture(app.store, ch.id).status == DeliveryState.SENDING
    later = sender(app, {"slack": slack_poster(slack)}, "w2")
    assert asyncio.run(later.runner.recover()) == []  # its lease is still live
    lapse(app.store)
    assert asyncio.run(later.runner.recover()) == [POSTED]
    assert len(slack.shared_files("C1")) == 1
    assert picture(app.store, ch.id).status == DeliveryState.POSTED
    assert asyncio.run(later.runner.recover()) == [] and len(slack.shared_files("C1")) == 1
