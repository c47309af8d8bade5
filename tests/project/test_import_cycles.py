"""No import circle in bot/ and digest/ (issue 24), except the CLI's registration.

The graph is built from the source (AST), module-level imports only: an import inside a
function runs when it is called (that is how heavy modules are deferred), and one under
``if TYPE_CHECKING:`` never runs. The one circle allowed is the command line's: bot/cli/main.py
defines the app and its `main` imports the bot/cli/*.py modules that register commands on it,
which import bot/cli/main.py back (only inside `main`, so it is not a module-level edge today; it is
allowed should it become one).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "digest")


def module_name(path: Path) -> str:
    """``bot/adapters/slack/app.py`` -> ``bot.adapters.slack.app``; a package is its __init__."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level(body: list[ast.stmt]):
    """The statements that run when the module is imported (not functions, not TYPE_CHECKING)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            if not _is_type_checking(stmt.test):
                yield from _top_level(stmt.body)
            yield from _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                yield from _top_level(block)
        elif isinstance(stmt, ast.With):
            yield from _top_level(stmt.body)
        else:
            yield stmt


def imports_of(name: str, source: str, known: set[str], is_package: bool = False) -> set[str]:
    """The modules of ``known`` that module ``name`` imports when it is imported."""
    found: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]
    for stmt in _top_level(ast.parse(source).body):
        if isinstance(stmt, ast.Import):
            targets = [a.name for a in stmt.names]
        elif isinstance(stmt, ast.ImportFrom):
            base = stmt.module or ""
            if stmt.level:  # relative: from the package, up level-1 steps
                up = package.split(".")[: len(package.split(".")) - (stmt.level - 1)]
                base = ".".join([*up, base] if base else up)
            # `from pkg import sub` imports the submodule; `from mod import name` the module
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in stmt.names
            ]
        else:
            continue
        found |= {t for t in targets if t in known and t != name}
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the bot/digest modules it imports at module level."""
    files = [f for p in PACKAGES for f in sorted((ROOT / p).rglob("*.py"))]
    files = [f for f in files if "migrations" not in f.parts]  # Alembic loads those by path
    names = {module_name(f): f for f in files}
    known = set(names)
    return {
        n: imports_of(n, f.read_text(encoding="utf-8"), known, f.name == "__init__.py")
        for n, f in names.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _registration(component: list[str]) -> bool:
    """The CLI's registration circle: bot/cli/main.py and the bot/cli/*.py modules alone."""
    return all(m == "bot.cli.main" or m.startswith("bot.cli.") for m in component)


def test_no_import_circle_but_the_clis_registration():
    """Breaks that turn this red (tried): `from digest.delivery.steps import next_digest` at the top
    of digest/channels/service.py (digest.delivery.steps imports digest.channels.service; ChannelService defers it
    for that reason); `from bot.app import build` at the top of bot/config.py (bot.app imports
    bot.config)."""
    graph = import_graph()
    assert (
        len(graph) > 100 and "digest.channels.service" in graph["digest.delivery.steps"]
    )  # really built
    found = [c for c in cycles(graph) if not _registration(c)]
    assert found == []


def test_the_checker_finds_circles_and_skips_deferred_imports():
    known = {"p", "p.a", "p.b", "p.c", "p.d"}
    a = "from p import b\n"
    b = "import p.c\nif TYPE_CHECKING:\n    from p.d import X\n"
    c = "from .a import thing\ndef f():\n    import p.d\n"
    d = "from p.a import y\n"
    graph = {
        "p.a": imports_of("p.a", a, known),
        "p.b": imports_of("p.b", b, known),
        "p.c": imports_of("p.c", c, known),
        "p.d": imports_of("p.d", d, known),
    }
    assert graph == {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]
    assert _registration(["bot.cli.main", "bot.cli.channels"]) and not _registration(
        ["bot.cli.main", "bot.app"]
    )
