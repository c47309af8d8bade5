"""What `/papers import` costs: reading a BibTeX export, and importing it into a channel.

    python -m bench.library_import [--papers 10000] [--entries 100 1000]

Prints, per library size, the seconds to parse the file (bibtexparser, then ingest's text
cleaning of every title and abstract) and to import it through the command core into a new
channel of a store of ``--papers`` synthetic papers (matching every entry, storing the ones it
keeps: a channel follows at most 50, so at most 50 are stored).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bot.commands import Context
from bot.commands.core import Args
from bot.commands.handlers_library import Upload
from digest.library.formats import parse_library
from digest.models import ChannelRef
from tests.conftest import make_app
from tests.support.corpus import TOPICS, synthetic_records


def bibtex(n: int) -> bytes:
    """``n`` entries as Zotero writes them: title, two authors, year, DOI and a 600-character
    abstract."""
    filler = "We evaluate on standard benchmarks and report consistent improvements. " * 8
    out = []
    for i in range(n):
        topic = list(TOPICS)[i % len(TOPICS)]
        out.append(
            f"@article{{key{i},\n  title = {{{{{TOPICS[topic][0]}}}: study {i}}},\n"
            f"  author = {{Lovelace, Ada and Turing, Alan}},\n  year = {{2024}},\n"
            f"  doi = {{10.1000/bench.{i}}},\n  abstract = {{{filler}}}\n}}\n"
        )
    return "".join(out).encode()


def main() -> None:
    """Print a table: entries, file size, parse seconds, import seconds."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=10_000)
    ap.add_argument("--entries", type=int, nargs="+", default=[100, 1000])
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp())
    per_topic = max(1, a.papers // len(TOPICS))
    app = make_app(f"sqlite:///{folder / 'bench.db'}", folder, synthetic_records(per_topic))
    print(f"store: {app.store.papers.count():,} papers (SQLite)")
    print(f"{'entries':>8} {'bytes':>9} {'parse s':>8} {'import s':>9}")
    for n in a.entries:
        data = bibtex(n)
        started = time.perf_counter()
        parse_library(data, "bench.bib")
        parsed = time.perf_counter() - started
        ctx = Context(ChannelRef("console", f"bench{n}"), "bench")
        started = time.perf_counter()
        reply = app.commands.invoke("import", ctx, Args.typed(file=Upload("bench.bib", data)))
        imported = time.perf_counter() - started
        assert not reply.error, reply.text
        print(f"{n:>8} {len(data):>9,} {parsed:>8.2f} {imported:>9.2f}")
    app.close()


if __name__ == "__main__":
    main()
