"""Load bench: what a run is configured with, what it records, and the papers and channels it
generates (deterministic, from a seed). No processes here: bench/load.py runs them."""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVAL_PAPERS = (
    Path(os.environ.get("DIGESTBOT_EVAL_DIR", ROOT.parent / "shared" / "eval" / "neurips2023"))
    / "papers.jsonl"
)
SECRET = "load-bench-secret"
TOPICS = [
    "diffusion models",
    "graph neural networks",
    "reinforcement learning",
    "large language models",
    "federated learning",
    "sparse autoencoders",
    "contrastive learning",
    "bayesian optimization",
]
NEEDLE = "quorbliflex"  # a word no generated paper contains (the visibility probe)
GUILD = "77"
SLOW = 3.0  # Slack's and Discord's deadline for the first answer
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass
class Config:
    """What one bench run does (sizes, rate, where)."""

    channels: int = 1000
    papers: int = 10_000
    ingest: int = 10_000
    rate: float = 4.0
    duration: float = 60.0
    backends: tuple[str, ...] = ("sqlite",)
    platforms: tuple[str, ...] = ("slack", "discord")
    pg_url: str = "postgresql://postgres@127.0.0.1:5432/load_bench"
    semantic: str = "off"
    grace: float = 30.0  # seconds after the last command for late answers
    ready_timeout: float = 900.0  # start-up plus the first search (index fit) may take this long
    visible_timeout: float = 120.0
    due_window: float = 180.0  # seconds after the due minute the digests are watched
    latency: float = 0.05  # the fakes' answer time while digests are due
    cli: bool = True
    due_phase: bool = True  # the restart with every channel due in one minute
    workdir: Path | None = None
    seed: int = 21
    replicas: int = 0  # > 0: the replicas run instead (bench/load_replicas.py)


@dataclass
class Sample:
    """One command sent: when, and when the platform saw the ack and the first answer."""

    platform: str
    kind: str
    sent: float
    ack: float | None = None
    answered: float | None = None
    key: str = ""  # Slack: response-url method; Discord: interaction token


@dataclass
class Result:
    """Everything measured for one backend."""

    backend: str
    samples: list[Sample] = field(default_factory=list)
    ready_s: float = math.nan
    first_search_s: float = math.nan
    seed_s: dict[str, float] = field(default_factory=dict)
    ingest_s: float = math.nan
    ingest_rc: int | None = None
    visible: dict[str, float] = field(default_factory=dict)  # probe -> seconds to found
    cpu_s: float = math.nan
    rss_mb: float = math.nan
    # The bot's child processes (the embedding worker, the weekly drawer, multiprocessing's
    # resource tracker): CPU summed, the largest peak RSS.
    child_cpu_s: float = math.nan
    child_rss_mb: float = math.nan
    due: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- data


def sentences_and_titles() -> tuple[list[str], list[str]]:
    """Sentences and titles to recombine: the NeurIPS 2023 set when present, else the bundled list."""
    if EVAL_PAPERS.exists():
        rows = [json.loads(line) for line in EVAL_PAPERS.open()]
        pairs = [(r["title"], r["abstract"]) for r in rows]
    else:
        from digest import BUNDLED_PAPERS
        from digest.ingest.parse import parse_neurips_list

        parsed = parse_neurips_list(BUNDLED_PAPERS.read_text(encoding="utf-8"))
        pairs = [(r.title, r.abstract) for r in parsed.records]
    sentences = [s for _, a in pairs for s in re.split(r"(?<=\.)\s+", a) if len(s) > 30]
    return sentences, [t for t, _ in pairs]


def write_papers(path: Path, n: int, prefix: str, seed: int) -> list[str]:
    """``n`` synthetic papers as JSON lines (deterministic); returns their ids."""
    sentences, titles = sentences_and_titles()
    rng = random.Random(f"{seed}-{prefix}")
    ids = []
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            pid = f"{prefix}{i}"
            words = rng.choice(titles).split()
            cut = rng.randint(1, max(1, len(words) - 1))
            title = " ".join(words[:cut] + rng.choice(titles).split()[cut:]) + f" ({prefix}{i})"
            abstract = " ".join(rng.sample(sentences, min(len(sentences), rng.randint(5, 9))))
            row = {
                "id": pid,
                "title": title,
                "abstract": abstract,
                "venue": "Bench 2026",
                "year": 2026,
                "authors": [f"Author {rng.randint(1, 5000)}"],
            }
            out.write(json.dumps(row) + "\n")
            ids.append(pid)
    return ids


def corpus_source() -> str:
    """Which titles and sentences the generated papers recombine (the run's header says it)."""
    if EVAL_PAPERS.exists():
        return f"recombined from {EVAL_PAPERS}"
    return "recombined from the 19 bundled papers (set DIGESTBOT_EVAL_DIR for NeurIPS 2023)"


def _families(text: str) -> set[str]:
    """The word families of a text ('graph' for 'graphs')."""
    from digest.rank.analyzer import family_key, phrase_terms

    return {family_key(t) for t in phrase_terms(text) if " " not in t}


def known_pair(files: list[Path]) -> tuple[str, str]:
    """Two title words the first file's papers use (each in two or more, so any fit indexes them)
    that as few papers of ``files`` as possible use together, none in its title (relatives
    count): a paper titled with both is the best match for them in any fit.

    On a corpus recombined from few titles every title's words are in thousands of papers, so a
    stored title as the query puts hundreds of papers level with the new one (on the 19 bundled
    papers a fresh fit ranked it about 150th): the probe must not rest on that."""
    from digest.rank.analyzer import family_key, term_of

    rows = [json.loads(line) for f in files for line in f.open(encoding="utf-8")]
    seeded = sum(1 for _ in files[0].open(encoding="utf-8"))
    docs = [_families(f"{r['title']}. {r['abstract']}") for r in rows]
    titles = [_families(r["title"]) for r in rows]
    df: dict[str, int] = {}
    for fams in docs[:seeded]:
        for k in fams:
            df[k] = df.get(k, 0) + 1
    words: dict[str, str] = {}  # family -> a title word of it that the analyzer keeps as typed
    for r in rows[:seeded]:
        for w in re.findall(r"[a-z]{5,}", r["title"].lower()):
            if term_of(w) == w and df.get(key := family_key(w), 0) >= 2:
                words.setdefault(key, w)
    rare = sorted(words, key=lambda k: (df[k], k))[:300]
    where: dict[str, set[int]] = {k: set() for k in rare}
    in_title: dict[str, set[int]] = {k: set() for k in rare}
    for i, (fams, title) in enumerate(zip(docs, titles, strict=True)):
        for k in fams.intersection(where):
            where[k].add(i)
        for k in title.intersection(where):
            in_title[k].add(i)
    pairs = (
        (len(where[a] & where[b]), df[a] + df[b], a, b)
        for i, a in enumerate(rare)
        for b in rare[i + 1 :]
        if not in_title[a] & in_title[b]
    )
    best = min(pairs, default=None)
    if best is None:
        raise RuntimeError("every two indexed title words share a generated paper's title")
    return words[best[2]], words[best[3]]


def write_needle(path: Path, files: list[Path]) -> str:
    """One paper only the visibility probes look for: its title holds a word no other paper has
    and two words the stored papers use but never together (``known_pair``); returns those two
    words (the second probe's query)."""
    first = json.loads(files[0].open(encoding="utf-8").readline())
    a, b = known_pair(files)
    row = {
        "id": "needle-1",
        "title": f"The {NEEDLE} effect: {a} meets {b}",
        "abstract": f"We describe the {NEEDLE} effect. {first['abstract']}",
        "year": 2026,
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return f"{a} {b}"


def channel_ids(cfg: Config) -> dict[str, list[str]]:
    """The seeded channels, split evenly between the platforms run."""
    out: dict[str, list[str]] = {p: [] for p in cfg.platforms}
    for i in range(cfg.channels):
        p = cfg.platforms[i % len(cfg.platforms)]
        out[p].append(f"C{i:07d}" if p == "slack" else str(5_000_000 + i))
    return out


def not_today() -> str:
    """A weekday that is not today (UTC): nothing is due or caught up while commands run."""
    return WEEKDAYS[(datetime.now(UTC).weekday() + 1) % 7]


def export_doc(cfg: Config, work: Path) -> dict:
    """An export of N channels, each row copied from one channel the code itself created, so
    every column (present or added later) holds what the code would store."""
    from bot.app import build
    from bot.config import Settings
    from digest.models import ChannelRef, SubscriptionKind
    from digest.transfer.portable import export_state

    url = f"sqlite:///{work / 'template.db'}"
    app = build(url, Settings(index_dir=str(work / "template-index"), database_url=url))
    try:
        ref = ChannelRef("slack", "CTEMPLATE", "T1")
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, TOPICS[0])
        # schedule via the command path, so any column it maintains is set as it would be
        from bot.commands import Context

        app.commands.handle(f"schedule 09:00 UTC {not_today()}", Context(ref, "U1"))
        doc = export_state(app.store)
    finally:
        app.close()
    (chan,), (sub,) = doc["channels"], doc["subscriptions"]
    doc["channels"], doc["subscriptions"] = [], []
    n = 0
    for plat, ids in channel_ids(cfg).items():
        for cid in ids:
            n += 1
            ws = "T1" if plat == "slack" else GUILD
            doc["channels"].append(
                {
                    **chan,
                    "id": n,
                    "platform": plat,
                    "workspace": ws,
                    "channel_id": cid,
                    "name": f"bench-{n}",
                }
            )
            doc["subscriptions"].append(
                {**sub, "id": n, "channel_id": n, "text": TOPICS[n % len(TOPICS)]}
            )
    return doc


# ---------------------------------------------------------------- processes


def parse(argv: list[str] | None = None) -> Config:
    p = argparse.ArgumentParser(
        description="Load bench (issue 21): a real `digestbot run` under load."
    )
    p.add_argument("--channels", type=int, default=1000)
    p.add_argument("--papers", type=int, default=10_000, help="papers stored before the run")
    p.add_argument("--ingest", type=int, default=10_000, help="papers the concurrent ingest adds")
    p.add_argument("--rate", type=float, default=4.0, help="commands a second")
    p.add_argument("--duration", type=float, default=60.0, help="seconds of commands")
    p.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    p.add_argument("--platform", choices=("slack", "discord", "both"), default="both")
    p.add_argument("--pg-url", default=Config.pg_url)
    p.add_argument("--semantic", default="off", help="DIGESTBOT_SEMANTIC for the bot and ingests")
    p.add_argument("--no-cli", action="store_true", help="skip the command-line CPU table")
    p.add_argument("--workdir", type=Path, help="keep databases and logs here")
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    p.add_argument(
        "--no-due",
        action="store_true",
        help="skip the restart with every channel due (bench.schedule measures it)",
    )
    p.add_argument(
        "--replicas",
        type=int,
        default=0,
        help="instead: N replicas on PostgreSQL, digests per replica, one killed (its shard's take-over)",
    )
    a = p.parse_args(argv)
    cfg = Config(
        replicas=a.replicas,
        channels=a.channels,
        papers=a.papers,
        ingest=a.ingest,
        rate=a.rate,
        duration=a.duration,
        pg_url=a.pg_url,
        semantic=a.semantic,
        cli=not a.no_cli,
        workdir=a.workdir,
        due_phase=not a.no_due,
        backends=("sqlite", "postgres") if a.backend == "both" else (a.backend,),
        platforms=("slack", "discord") if a.platform == "both" else (a.platform,),
    )
    if a.quick:
        cfg.channels, cfg.papers, cfg.ingest, cfg.duration = 20, 300, 300, 10
        cfg.due_window = 90
    return cfg
