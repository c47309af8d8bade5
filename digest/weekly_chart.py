"""Drawing the weekly picture with matplotlib (Agg, no display): a PNG as bytes, nothing else.

matplotlib is imported inside ``draw`` only: commands that draw nothing never load it.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from digest.weekly import WeeklyStats

#: Colour-blind-safe (Okabe-Ito), one per interest line.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999")
UP, DOWN = "#009E73", "#D55E00"


def draw(stats: WeeklyStats, title: str) -> bytes:
    """The picture as PNG bytes: papers per interest per week above, votes and 👍 rate below."""
    import matplotlib

    matplotlib.use("Agg", force=True)  # never a window, whatever the machine's default backend
    from matplotlib.figure import Figure  # a Figure, not pyplot: no global state, thread-safe

    labels = [f"{m:%-d %b}" for m in stats.weeks]
    if stats.partial:
        labels[-1] += "\n(so far)"
    x = range(len(stats.weeks))
    fig = Figure(figsize=(8, 5.6), dpi=100, layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    fig.suptitle(title, fontsize=11)
    for n, (interest, counts) in enumerate(stats.per_interest.items()):
        top.plot(x, counts, marker="o", color=COLOURS[n % len(COLOURS)], label=_short(interest))
    top.set_ylabel("papers sent")
    top.set_ylim(bottom=0)
    top.yaxis.get_major_locator().set_params(integer=True)
    if stats.per_interest:
        top.legend(fontsize=8, loc="upper left", frameon=False)
    else:
        top.text(0.5, 0.5, "no papers sent", ha="center", va="center", transform=top.transAxes)
    top.grid(axis="y", alpha=0.3)
    bottom.bar(x, stats.up, color=UP, label="up votes")
    bottom.bar(x, [-d for d in stats.down], color=DOWN, label="down votes")
    bottom.axhline(0, color="black", linewidth=0.6)
    bottom.set_ylabel("votes (down below the line)")
    bottom.yaxis.get_major_locator().set_params(integer=True)
    bottom.yaxis.set_major_formatter(lambda v, _: f"{abs(v):g}")  # a count, not a sign
    rate = bottom.twinx()
    shares = [
        u / (u + d) if u + d else float("nan") for u, d in zip(stats.up, stats.down, strict=True)
    ]
    rate.plot(x, shares, color="black", marker="s", linewidth=1, label="share of up votes")
    rate.set_ylim(0, 1.05)
    rate.set_ylabel("up share")
    handles = [h for ax in (bottom, rate) for h in ax.get_legend_handles_labels()[0]]
    bottom.legend(handles=handles, fontsize=8, loc="upper left", frameon=False)
    bottom.set_xticks(list(x), labels, fontsize=8)
    bottom.set_xlabel("week starting")
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
