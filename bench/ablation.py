"""Ablation on both development query files: each ranking component off in turn, with intervals.

A component stays only when turning it off hurts on one file and is neutral (interval spans 0)
or hurts on the other:  python -m bench.ablation
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from bench.common import (
    dense_vectors,
    digestbot_rank,
    load_eval,
    load_query_files,
    machine,
    paired_bootstrap,
    per_query,
    table,
)
from bench.quality import fmt_ci
from digest.index.embeddings import load_encoder
from digest.rank import analyzer
from digest.rank.index import build_index
from digest.rank.scorer import ScoreParams
from digest.rank.semantic import SemanticParams

SP = ScoreParams()
SCORE_OFF = {
    "word families (causal ~ causality)": replace(SP, family_weight=0.0),
    "acronym expansion": replace(SP, expansion_weight=0.0),
    "expansion specificity discount": replace(SP, expansion_spec=0.0),
    "LSA latent score": replace(SP, latent_weight=0.0),
    "pseudo-relevance feedback (LSA)": replace(SP, prf_docs=0),
}
ANALYZER_OFF = {
    "plural-only stemming (Porter2 instead)": {"light_stem": False},
    "'and'/'or' end a phrase": {"conj_breaks_phrase": False},
}
SEM = SemanticParams()
SEMANTIC_OFF = {
    "dense PRF (query moved to lexical top 10)": replace(SEM, prf_docs=0),
    "query-adaptive weight (fixed 0.5 instead)": replace(
        SEM, max_weight=0.5, ramp_from=0, ramp_words=0
    ),
}


def scores(rank, files) -> dict[str, np.ndarray]:
    return {name: per_query(rank, qs)[:, 0] for name, qs in files.items()}


def row(label: str, full: dict, off: dict) -> list:
    """Full minus component-off, per file: positive means the component helps."""
    return [label] + [fmt_ci(*paired_bootstrap(full[k], off[k]), signed=True) for k in full]


def main() -> None:
    docs, _ = load_eval()
    files = load_query_files()
    index = build_index(docs)
    full = scores(digestbot_rank(index), files)
    rows = [["(full lexical, nDCG@10)"] + [f"{v.mean():.4f}" for v in full.values()]]
    for label, sp in SCORE_OFF.items():
        rows.append(row(label, full, scores(digestbot_rank(index, score_params=sp), files)))
    for label, change in ANALYZER_OFF.items():
        analyzer.configure(**change)
        rows.append(row(label, full, scores(digestbot_rank(build_index(docs)), files)))
        analyzer.configure(**{k: not v for k, v in change.items()})
    encoder = load_encoder()
    if encoder is not None:
        index.dense, index.has_dense = dense_vectors(docs, encoder), np.ones(len(docs), bool)
        sem = scores(digestbot_rank(index, encoder), files)
        rows.append(["(full semantic, nDCG@10)"] + [f"{v.mean():.4f}" for v in sem.values()])
        rows.append(row("semantic fusion (vs lexical)", sem, full))
        for label, p in SEMANTIC_OFF.items():
            rows.append(row(label, sem, scores(digestbot_rank(index, encoder, None, p), files)))
    header = ["component turned off"] + [f"{k}: gain [95% CI]" for k in files]
    print(table(f"Ablation, nDCG@10 gain of each component ({machine()})", header, rows))


if __name__ == "__main__":
    main()
