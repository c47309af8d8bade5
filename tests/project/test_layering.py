"""Layers hold: nothing under digest/ imports chat or scheduler code, and the chat side's adapters
and commands reach the database only through the service layer."""

import ast
from pathlib import Path

FORBIDDEN = {"bot", "slack_bolt", "slack_sdk", "discord", "apscheduler"}
CORE = Path(__file__).resolve().parents[2] / "digest"


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_imports_no_platform_or_scheduler_code():
    files = list(CORE.rglob("*.py"))
    assert len(files) > 10  # the walk really found the core
    offenders = {str(f.relative_to(CORE)): imported_roots(f) & FORBIDDEN for f in files}
    assert {f: bad for f, bad in offenders.items() if bad} == {}


def test_checker_catches_a_forbidden_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from slack_bolt import App\nimport discord.ext\n")
    assert imported_roots(bad) & FORBIDDEN == {"slack_bolt", "discord"}


# --- The chat side talks to services, never to the store ---------------------------------------

BOT = CORE.parent / "bot"
#: The only files under bot/ that may import or reach the store. bot/app.py is the composition
#: root: it opens the store and builds the services over it.
STORE_ALLOWED = {
    BOT / "app.py",
}
#: Everything else on the chat side (adapters, commands, the runner, the CLI, ops, config...)
#: reaches the database only through the service layer (digest/channels/service.py, digest/papers/service.py,
#: digest/delivery/steps.py).
CLOSED = sorted(f for f in BOT.rglob("*.py") if f not in STORE_ALLOWED)


def store_imports(tree: ast.AST) -> list[str]:
    """Every import of digest.store or a submodule, at any depth (function-level included)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found += [n for n in names if n == "digest.store" or n.startswith("digest.store.")]
    return found


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


def test_the_chat_side_never_imports_the_store():
    """Breaks that turn this red: `from digest.store.kv import KeyValueRepo` back in
    bot/adapters/discord/sync.py; `from digest.store.deliveries import POSTED` (even inside a
    function) in bot/runtime/outcome.py; `import digest.store.database` in bot/adapters/slack/bolt_middleware.py;
    `from digest.store.database import revision_of` back in bot/cli/main.py (`db upgrade`);
    `from digest.store import Store` in bot/runtime/ops.py; `from digest.store.channels import Shards`
    in bot/config.py."""
    offenders = {name: store_imports(tree) for name, tree in _closed_trees().items()}
    assert {name: found for name, found in offenders.items() if found} == {}


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


def test_store_checkers_catch_what_they_are_for():
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
    assert store_imports(tree) == [
        "digest.store",
        "digest.store.kv",
        "digest.store.kv.KeyValueRepo",
        "digest.store",
        "digest.store.deliveries",
    ]
    assert sorted(store_reaches(tree)) == [
        "line 6: deps.channels.store",
        "line 7: store.channels",
        "line 9: app.store",
    ]
