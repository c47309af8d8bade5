"""Layers hold: nothing under digest/ imports chat or scheduler code, and the chat side's adapters
and commands reach the database only through the service layer."""

import ast
from pathlib import Path

FORBIDDEN = {"bot", "slack_bolt", "slack_sdk", "discord", "apscheduler"}
CORE = Path(__file__).resolve().parents[1] / "digest"


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
#: Adapters, the command core and the runner: they reach the database only through the service
#: layer (digest/channel_service.py, digest/paper_service.py, digest/delivery.py). bot/app.py, the composition
#: root, builds the store; the scheduler, ops and the CLI are not closed yet (issue 24).
CLOSED = [
    *sorted((BOT / "adapters").rglob("*.py")),
    *sorted((BOT / "commands").rglob("*.py")),
    BOT / "outcome.py",
    BOT / "runner.py",
]


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
    """Attribute chains through a store: ``x.store.y`` or ``store.y`` (a repository reached)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        inner = node.value
        through = (isinstance(inner, ast.Attribute) and inner.attr == "store") or (
            isinstance(inner, ast.Name) and inner.id == "store"
        )
        if through:
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def _closed_trees() -> dict[str, ast.AST]:
    assert len(CLOSED) > 20  # the walk really found the adapters and commands
    return {
        str(f.relative_to(BOT)): ast.parse(f.read_text(encoding="utf-8"), str(f)) for f in CLOSED
    }


def test_adapters_and_commands_never_import_the_store():
    """Breaks that turn this red: `from digest.store.kv import KeyValueRepo` back in
    bot/adapters/discord/sync.py; `from digest.store.deliveries import POSTED` (even inside a
    function) in bot/outcome.py; `import digest.store.database` in bot/adapters/slack/bolt_middleware.py."""
    offenders = {name: store_imports(tree) for name, tree in _closed_trees().items()}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_adapters_and_commands_never_reach_a_repository():
    """Breaks that turn this red: `deps.channels.store.channels.get(ref)` back in
    bot/adapters/slack/listeners.py; `store = deps.channels.store` then `store.deliveries.count`
    in bot/adapters/discord/interact.py; `cmds.channels.store.channels.update(...)` in
    bot/commands/handlers_channel.py; `deliveries.store.channels.update(...)` to pause a channel in
    bot/runner.py."""
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
    )
    tree = ast.parse(code)
    assert store_imports(tree) == [
        "digest.store",
        "digest.store.kv",
        "digest.store.kv.KeyValueRepo",
        "digest.store",
        "digest.store.deliveries",
    ]
    assert store_reaches(tree) == [
        "line 6: deps.channels.store.kv",
        "line 7: store.channels",
    ]
