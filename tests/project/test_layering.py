"""The chat side reaches the database only through the service layer: what the import contract
(pyproject.toml [tool.importlinter], run by `lint-imports` in .ci/run) cannot see.

The contract forbids importing digest.store outside bot/app.py; it cannot see a store *reached*
through an attribute (``deps.channels.store.kv.get(...)``), which imports nothing. This scan does.
"""

import ast
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"
#: The only file under bot/ that may reach the store: bot/app.py, the composition root, opens it
#: and builds the services over it.
STORE_ALLOWED = {
    BOT / "app.py",
}
#: Everything else on the chat side (adapters, commands, the runner, the CLI, ops, config...)
#: reaches the database only through the service layer.
CLOSED = sorted(f for f in BOT.rglob("*.py") if f not in STORE_ALLOWED)


def store_reaches(tree: ast.AST) -> list[str]:
    """A store reached: ``x.store`` (a repository through it, or the store handed on, as in
    ``export_state(app.store)``) or ``store.y``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        named = isinstance(node.value, ast.Name) and node.value.id == "store"
        if node.attr == "store" or named:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def _closed_trees() -> dict[str, ast.AST]:
    assert len(CLOSED) > 30  # the walk really found the adapters, commands and the CLI
    assert {"main.py", "channels.py", "ops.py", "runner.py"} <= {f.name for f in CLOSED}
    return {
        str(f.relative_to(BOT)): ast.parse(f.read_text(encoding="utf-8"), str(f)) for f in CLOSED
    }


def test_the_chat_side_never_reaches_a_repository():
    """Breaks that turn this red: `deps.channels.store.channels.get(ref)` back in
    bot/adapters/slack/listeners.py; `store = deps.channels.store` then `store.deliveries.count`
    in bot/adapters/discord/interact.py; `cmds.channels.store.channels.update(...)` in
    bot/commands/handlers_channel.py; `deliveries.store.channels.update(...)` to pause a channel in
    bot/runtime/runner.py; `application.store.channels.all()` back in `digestbot channels`
    (bot/cli/channels.py) or `_first_run` (bot/cli/run.py); `application.store.deliveries.for_day`
    in bot/cli/digest.py; `self.store.kv.get(...)` in bot/runtime/ops.py's health check."""
    offenders = {name: store_reaches(tree) for name, tree in _closed_trees().items()}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_store_checker_catches_what_it_is_for():
    code = (
        "import digest.store\n"
        "from digest.store.kv import KeyValueRepo\n"
        "from digest import models\n"
        "def f(deps, store):\n"
        "    from digest.store import deliveries\n"
        "    deps.channels.store.kv.get('k')\n"
        "    store.channels.all()\n"
        "    deps.store_name.x\n"
        "    export_state(app.store)\n"
    )
    tree = ast.parse(code)
    assert sorted(store_reaches(tree)) == [
        "line 6: deps.channels.store",
        "line 7: store.channels",
        "line 9: app.store",
    ]
