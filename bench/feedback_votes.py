"""Lift with few votes: the learner's pulls ramped with a channel's vote count, on both files.

Day 1 as in bench/feedback.py (the channel's first digest, every item voted through
`ChannelService.vote`; `--votes N`, 5 unless given); then, per setting of
`FeedbackParams.full_at` (votes until the pulls reach full strength; fewer scale them down in
proportion), every channel's day-2 digest is composed again by `ChannelService.preview`. Each
row: day-2 nDCG@10, the lift over the same channel's ranking without votes and the difference to
full strength from the first vote, paired bootstrap 95%. With ``full_at`` at or under the votes
cast, a setting is the shipped learner unchanged (so 20-vote figures hold for ``full_at`` <= 20).
    python -m bench.feedback_votes [--votes N]
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.common import (
    EVAL_DIR,
    load_eval,
    load_query_files,
    machine,
    ndcg,
    paired_bootstrap,
    table,
)
from bench.feedback import day1, no_votes, open_service
from bench.feedback_ablation import day2_scores
from bench.quality import fmt_ci
from digest.rank import feedback

KEPT = feedback.PARAMS
SETTINGS = {
    "full strength from the first vote (full_at 0)": replace(KEPT, full_at=0),
    "full at 10 votes": replace(KEPT, full_at=10),
    "full at 20 votes": replace(KEPT, full_at=20),
}


def main() -> None:
    if "--votes" not in sys.argv:
        sys.argv += ["--votes", "5"]
    votes = int(sys.argv[sys.argv.index("--votes") + 1])
    docs, _ = load_eval()
    ids = [d.id for d in docs]
    with tempfile.TemporaryDirectory() as tmp:
        svc, store = open_service(Path(tmp), docs)
        start = 1
        for name, queries in load_query_files(EVAL_DIR).items():
            channels, plain = [], []
            for n, q in enumerate(queries, start):
                ref, shown = day1(svc, n, q)
                target = set(q["relevant"]) - set(shown)
                if target:
                    unseen = [p for p in ids if p not in set(shown)]
                    channels.append((ref, target, unseen))
                    plain.append(ndcg(no_votes(svc, q["query"], unseen), target))
            start += len(queries)
            p = np.array(plain)
            got = {}
            for label, fp in SETTINGS.items():
                feedback.PARAMS = fp
                got[label] = day2_scores(svc, channels)
            feedback.PARAMS = KEPT
            first = got["full strength from the first vote (full_at 0)"]
            rows = [["no votes", p.mean(), "", ""]] + [
                [
                    label,
                    a.mean(),
                    fmt_ci(*paired_bootstrap(a, p), signed=True),
                    fmt_ci(*paired_bootstrap(a, first), signed=True),
                ]
                for label, a in got.items()
            ]
            print(
                table(
                    f"Lift at {votes} votes, {name}.jsonl, lexical: {len(p)} channels ({machine()})",
                    ["learner", "day-2 nDCG@10", "lift [95% CI]", "minus full_at 0 [95% CI]"],
                    rows,
                )
            )
            sys.stdout.flush()
        store.close()


if __name__ == "__main__":
    main()
