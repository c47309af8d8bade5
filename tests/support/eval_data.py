"""A small evaluation set in the layout of ../shared/eval/neurips2023, made from the synthetic
corpus, so every living bench can run end to end in the suite without the shared data."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.corpus import TOPICS, synthetic_records

#: A rewording of each topic that avoids its own words, as paraphrases.jsonl does.
PARAPHRASES = {
    "sae": "finding human readable units inside trained networks",
    "gnn": "learning on nodes and edges of relational structures",
    "diffusion": "generating pictures by gradually removing corruption",
    "rl": "agents that learn to act from rewards",
    "fl": "training across many devices without pooling their data",
    "llm": "very big text generators and what they can do",
}


def write_eval_dir(folder: Path, per_topic: int = 12) -> Path:
    """Write papers.jsonl and the four query files into ``folder``; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    records = synthetic_records(per_topic=per_topic)
    by_topic: dict[str, list[str]] = {t: [] for t in TOPICS}
    with (folder / "papers.jsonl").open("w", encoding="utf-8") as out:
        for r in records:
            topic = r.id.split("-")[1]
            topic = "gnn" if topic.startswith("gnn") else topic
            by_topic[topic].append(r.id)
            row = {"id": r.id, "title": r.title, "abstract": r.abstract}
            row |= {"keywords": [TOPICS[topic][0]], "url": f"https://example.org/{r.id}"}
            out.write(json.dumps(row | {"venue": "SynthConf 2025"}) + "\n")

    def dump(name: str, rows: list[dict]) -> None:
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")

    dump(
        "queries",
        [
            {"query": TOPICS[t][0], "kind": "keyword", "relevant": ids}
            for t, ids in by_topic.items()
        ],
    )
    dump(
        "themes",
        [
            {"query": ", ".join(TOPICS[t][:3]), "kind": "theme", "relevant": ids}
            for t, ids in by_topic.items()
        ],
    )
    dump(
        "paraphrases",
        [
            {"query": PARAPHRASES[t], "kind": "paraphrase", "theme": t, "relevant": ids}
            for t, ids in by_topic.items()
        ],
    )
    dump(
        "library",
        [{"liked": ids[:5], "kind": "library", "relevant": ids[5:]} for ids in by_topic.values()],
    )
    return folder
