"""`digestbot discord shards [COUNT]`: who serves each leased Discord shard, and the count set once
in the database for every replica (no edit on each replica). A bad count is one `error:` line,
exit 2. Breaks that turn this red: the count written to this process's settings instead of the
database (the stored count stays 1); holders not read from the leases (no shard lines)."""

from bot.cli.main import main
from digest.store import Store


def test_shards_shows_the_leases_and_sets_the_count_once(env_isolated, capsys, monkeypatch):
    url = f"sqlite:///{env_isolated / 'cli.db'}"
    store = Store.open(url)
    store.leases.shards("discord", "replica-a", store.leases.shard_count("discord", 1), 60)
    assert main(["discord", "shards"]) == 0
    out = capsys.readouterr().out
    assert "shard 0: replica-a until" in out
    assert main(["discord", "shards", "3"]) == 0
    assert "Discord shard count set to 3" in capsys.readouterr().out
    assert store.leases.shard_count("discord", 1) == 3  # what every replica reads
    code = main(["discord", "shards", "0"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().startswith("error: ") and len(err.strip().splitlines()) == 1
    store.close()
