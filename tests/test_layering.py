"""The core stays platform-free: nothing under digest/ imports chat or scheduler code."""

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
