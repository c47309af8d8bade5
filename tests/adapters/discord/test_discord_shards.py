"""Issue 21, item 5: Discord sharding. Settings name this replica's shards; the client is an
AutoShardedClient on them; a replica's scheduler runs only the guild channels on its shards, and
DMs (Discord's shard 0) only on the replica holding shard 0."""

import asyncio
from datetime import UTC, datetime

import discord
import pytest
import time_machine

from bot.config import load_settings
from bot.runtime.runner import DigestRunner
from bot.runtime.scheduler import DigestScheduler
from digest.delivery.steps import Deliveries
from digest.errors import DigestError
from digest.models import ChannelRef, SubscriptionKind
from digest.store.channels import Shards
from tests.fakes.recording import RecordingAdapter

# Real-sized snowflakes: (id >> 22) % 2 is 0 for EVEN and 1 for ODD.
EVEN = str((1_000_000_000_000 << 22) | 12345)
ODD = str((1_000_000_000_001 << 22) | 999)
FAR = str((2**40 + 3) << 22)  # (id >> 22) % 4 == 3


@pytest.fixture
def env(monkeypatch, tmp_path):
    """A clean environment (no .env in the way) to set DIGESTBOT_ variables in."""
    monkeypatch.chdir(tmp_path)
    for name in ("DIGESTBOT_DISCORD_SHARD_COUNT", "DIGESTBOT_DISCORD_SHARD_IDS"):
        monkeypatch.delenv(name, raising=False)

    def put(**values: str) -> None:
        for k, v in values.items():
            monkeypatch.setenv(f"DIGESTBOT_DISCORD_SHARD_{k.upper()}", v)

    return put


def test_shard_settings_are_read_and_unset_means_every_shard(env):
    assert load_settings().discord_shards() is None  # discord.py decides, one replica
    env(count="4", ids=" 3, 0")
    s = load_settings()
    assert (s.discord_shard_count, s.discord_shard_ids) == (4, [3, 0])
    assert s.discord_shards() == Shards(frozenset({0, 3}), 4)
    env(count="2", ids="")  # blank is unset: this replica runs both
    assert load_settings().discord_shards() == Shards(frozenset({0, 1}), 2)


@pytest.mark.parametrize(
    ("count", "ids", "says"),
    [
        ("4", "0,4", "DIGESTBOT_DISCORD_SHARD_IDS: a shard id is not below the shard count 4"),
        ("4", "1,1", "DIGESTBOT_DISCORD_SHARD_IDS: a shard id is repeated"),
        ("4", "0,x", "DIGESTBOT_DISCORD_SHARD_IDS: not a comma list of whole numbers"),
        ("4", "-1", "DIGESTBOT_DISCORD_SHARD_IDS: not a comma list of whole numbers"),
        (None, "0", "DIGESTBOT_DISCORD_SHARD_IDS: needs DIGESTBOT_DISCORD_SHARD_COUNT too"),
        ("0", None, "DIGESTBOT_DISCORD_SHARD_COUNT: input should be greater than or equal to 1"),
        ("two", None, "DIGESTBOT_DISCORD_SHARD_COUNT: input should be a valid integer"),
    ],
)
def test_bad_shard_settings_are_one_clear_error(env, count, ids, says):
    env(**{k: v for k, v in {"count": count, "ids": ids}.items() if v is not None})
    with pytest.raises(DigestError) as err:
        load_settings()
    assert str(err.value).startswith("bad setting: " + says), err.value
    assert "\n" not in str(err.value)


def test_run_with_bad_shards_is_one_error_line_and_exit_2(env, capsys):
    """From the command line: one `error:` line, exit 2, no traceback."""
    from bot.cli.main import main

    env(count="2", ids="0,2")
    code = main(["run"])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "DIGESTBOT_DISCORD_SHARD_IDS" in lines[0] and "Traceback" not in err


def test_the_client_is_auto_sharded_on_the_configured_shards(app):
    """Built (never connected) as the composition root builds it. Break that turns this red:
    DigestClient back on discord.Client, or app.discord not passing the shard settings."""
    from pydantic import SecretStr

    app.settings.discord_token = SecretStr("x")
    app.settings.discord_shard_count, app.settings.discord_shard_ids = 8, [2, 5]
    client = app.discord
    assert isinstance(client, discord.AutoShardedClient)
    assert (client.shard_ids, client.shard_count) == ([2, 5], 8)

    from bot.adapters.deps import Deps
    from bot.adapters.discord.client import DigestClient

    auto = DigestClient(Deps(app.commands, app.channels))
    assert auto.shard_ids is None and auto.shard_count is None  # discord.py asks Discord


def test_the_store_returns_only_this_replicas_shards_on_both_engines(store):
    """ChannelRepo.due / next_due_time with shards, in SQL, agree with Discord's rule
    (guild_id >> 22) % count; DMs are shard 0; other platforms are not filtered. Breaks that
    turn this red: the shard condition left out of the query; `/` (NUMERIC division on
    PostgreSQL) instead of `//`; DMs given a shard of their own."""
    refs = {
        "even": ChannelRef("discord", "1", EVEN),
        "odd": ChannelRef("discord", "2", ODD),
        "far": ChannelRef("discord", "3", FAR),
        "dm": ChannelRef("discord", "@42", "dm"),
        "old-dm": ChannelRef("discord", "@43", ODD),  # a personal digest made in a server
        "slack": ChannelRef("slack", "C1", "T1"),
    }
    for ref in refs.values():
        store.channels.ensure(ref)
    now = datetime.now(UTC)
    platforms = {"discord", "slack"}

    def due(ids: set[int], count: int) -> set[str]:
        got = store.channels.due(now, platforms, Shards(frozenset(ids), count))
        return {name for name, ref in refs.items() if ref in {c.ref for c, _ in got}}

    assert due({0}, 2) == {"even", "dm", "old-dm", "slack"}
    assert due({1}, 2) == {"odd", "far", "slack"}
    assert due({3}, 4) == {"far", "slack"}
    assert due({0, 1, 2, 3}, 4) == set(refs)
    assert len(store.channels.due(now, platforms)) == len(refs)  # unsharded: everything
    for count in (1, 3, 4, 7):  # the SQL and Discord's rule agree
        for shard in range(count):
            mine = {
                c.ref
                for c, _ in store.channels.due(now, platforms, Shards(frozenset({shard}), count))
            }
            for ref in refs.values():
                if ref.platform == "slack":  # not sharded: every replica's
                    assert ref in mine
                    continue
                dm = ref.personal
                on = 0 if dm else (int(ref.workspace) >> 22) % count
                assert (ref in mine) == (on == shard), (ref, count)
    assert store.channels.next_due_time({"discord"}, Shards(frozenset({2}), 4)) is None
    assert store.channels.next_due_time({"discord"}, Shards(frozenset({1}), 2)) is not None


def test_each_replica_posts_only_its_shards_and_dms_go_to_shard_0(app):
    """Two replicas' schedulers on one database, shards {0} and {1} of 2, each with its own
    Discord adapter: every due digest is posted once, by the replica owning the channel's
    shard; the personal (DM) digest by the shard-0 replica. Ticking the shard-1 replica first
    proves it leaves the others alone rather than losing a race. Breaks that turn this red:
    DigestScheduler not passing its shards to ChannelRepo.due (replica 1 posts everything);
    the filter on next_due_time alone; DMs counted on another shard."""
    guild0 = ChannelRef("discord", "100", EVEN)
    guild1 = ChannelRef("discord", "200", ODD)
    dm = app.channels.personal_ref("discord", "7")
    with time_machine.travel(datetime(2026, 12, 2, tzinfo=UTC), tick=False):
        for ref in (guild0, guild1, dm):
            app.channels.follows.add(ref, SubscriptionKind.TOPIC, "graph neural networks")
            app.channels.settings.set_schedule(ref, "09:00", "UTC", "daily")
    nine = datetime(2026, 12, 3, 9, 0, 5, tzinfo=UTC)

    def replica(ids: set[int], name: str) -> tuple[DigestScheduler, RecordingAdapter]:
        adapter = RecordingAdapter("discord")
        runner = DigestRunner(Deliveries(app.papers, name), {"discord": adapter})
        shards = Shards(frozenset(ids), 2)
        return DigestScheduler(runner, clock=lambda: nine, shards=shards), adapter

    (one, posted1), (zero, posted0) = replica({1}, "r1"), replica({0}, "r0")
    assert set(asyncio.run(one.tick())) == {str(guild1)}
    assert set(asyncio.run(zero.tick())) == {str(guild0), str(dm)}
    assert [r for r, _ in posted1.digests] == [guild1]
    assert sorted(str(r) for r, _ in posted0.digests) == sorted([str(guild0), str(dm)])
    assert asyncio.run(one.tick()) == {} and asyncio.run(zero.tick()) == {}  # once each
