"""Drawing the weekly picture with matplotlib (Agg, no display): a PNG as bytes, nothing else.

matplotlib is imported inside ``draw`` only: commands that draw nothing never load it.
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from digest.weekly.stats import WeeklyStats

#: Colour-blind-safe (Okabe-Ito), one per interest; hatches tell neighbours apart in grey too.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999")
HATCHES = ("", "//", "..", "\\\\", "xx", "--", "oo")
UP, DOWN = "#009E73", "#D55E00"


def draw(stats: WeeklyStats, title: str) -> bytes:
    """The picture as PNG bytes (see ``figure``)."""
    import matplotlib

    out = io.BytesIO()
    # Interests and channel names are what people typed: "$x$" must print as typed, never be
    # parsed as a formula (an unknown "\\cmd" there made drawing raise).
    with matplotlib.rc_context({"text.parse_math": False}):
        figure(stats, title).savefig(out, format="png")
    return out.getvalue()


def figure(stats: WeeklyStats, title: str) -> Figure:
    """Papers per week stacked by interest (each interest its own bar segment, so equal counts
    never hide each other), votes per week below, and the 👍 share in its own small panel."""
    import matplotlib

    matplotlib.use("Agg", force=True)  # never a window, whatever the machine's default backend
    from matplotlib.figure import Figure  # a Figure, not pyplot: no global state, thread-safe

    labels = [f"{m:%-d %b}" for m in stats.weeks]
    if stats.partial:
        labels[-1] += "\n(so far)"
    x = list(range(len(stats.weeks)))
    fig = Figure(figsize=(8, 5.6), dpi=100, layout="constrained")
    top, votes, rate = fig.subplots(3, 1, sharex=True, height_ratios=(3.2, 1.4, 1))
    fig.suptitle(drawable(title), fontsize=11)
    base = [0] * len(x)
    for n, (interest, counts) in enumerate(stats.per_interest.items()):
        top.bar(
            x,
            counts,
            bottom=base,
            width=0.7,
            color=COLOURS[n % len(COLOURS)],
            hatch=HATCHES[n % len(HATCHES)],
            edgecolor="white",
            linewidth=0.6,
            label=f"{_short(drawable(interest))} ({sum(counts)})",
        )
        base = [b + c for b, c in zip(base, counts, strict=True)]
    for i, total in enumerate(base):
        if total:
            top.annotate(
                str(total),
                (i, total),
                ha="center",
                va="bottom",
                fontsize=7,
                xytext=(0, 1),
                textcoords="offset points",
            )
    top.set_ylabel("papers sent")
    top.set_ylim(0, max([*base, 1]) * 1.15)
    top.yaxis.get_major_locator().set_params(integer=True)
    if any(base):
        # Outside the bars, right of the axes: never drawn over a week's bar.
        top.legend(
            fontsize=7,
            loc="upper left",
            bbox_to_anchor=(1.01, 1),
            frameon=False,
            title="interest (papers)",
            title_fontsize=7,
            reverse=True,
        )
    else:
        top.text(0.5, 0.5, "no papers sent", ha="center", va="center", transform=top.transAxes)
    top.grid(axis="y", alpha=0.3)
    votes.bar(x, stats.up, width=0.7, color=UP, label="up votes")
    votes.bar(x, [-d for d in stats.down], width=0.7, color=DOWN, label="down votes")
    votes.axhline(0, color="black", linewidth=0.6)
    votes.set_ylabel("votes", fontsize=8)
    votes.yaxis.get_major_locator().set_params(integer=True)
    votes.yaxis.set_major_formatter(lambda v, _: f"{abs(v):g}")  # a count, not a sign
    votes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    shares = [
        u / (u + d) if u + d else float("nan") for u, d in zip(stats.up, stats.down, strict=True)
    ]
    rate.plot(x, shares, color="black", marker="s", linewidth=1, markersize=4)
    rate.set_ylim(-0.05, 1.05)
    rate.set_yticks([0, 0.5, 1], ["0%", "50%", "100%"], fontsize=7)
    rate.set_ylabel("up share", fontsize=8)
    rate.grid(axis="y", alpha=0.3)
    rate.set_xticks(x, labels, fontsize=8)
    rate.set_xlim(-0.6, len(x) - 0.4)
    rate.set_xlabel("week starting")
    return fig


def _short(text: str, limit: int = 32) -> str:
    """At most ``limit`` characters, cut at the last word boundary with "…" (a single long word
    is cut inside, as nothing else fits)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    word = head.rsplit(" ", 1)[0].rstrip(" ,;:-–")
    return (word if " " in head and len(word) >= limit // 3 else head) + "…"


#: Emoji in labels said in words: the picture's font (DejaVu Sans) has no glyph for them.
WORDS = {"👍": "liked", "👎": "disliked"}


def drawable(text: str) -> str:
    """``text`` as the font can draw it: 👍/👎 in words, any other character the font has no
    glyph for left out (it would print as an empty box)."""
    for emoji, word in WORDS.items():
        text = text.replace(emoji, word)
    font = _font()
    kept = "".join(c for c in text if c.isspace() or font.get_char_index(ord(c)))
    return " ".join(kept.split())


@lru_cache(maxsize=1)
def _font():  # noqa: ANN202 - matplotlib's FT2Font, imported here only
    """The font matplotlib draws the picture's text with."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    return FT2Font(font_manager.findfont(font_manager.FontProperties()))
