"""A digest's mentions: each pick carries the opted-in members it fits best (digest/mentions),
fixed when the digest is composed and stored with its claim."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from digest.mentions.service import Member, Scorer, best_fits, members_of

if TYPE_CHECKING:
    from digest.delivery.compose import Digest
    from digest.store import Store


def with_mentions(digest: Digest, ranker: Scorer | None, members: Sequence[Member]) -> Digest:
    """``digest`` with each pick carrying the members it fits best (at most one pick each)."""
    if digest.channel.ref.personal or not digest.items or not members or ranker is None:
        return digest
    fits = best_fits(ranker, members, [i.paper.id for i in digest.items])
    if not fits:
        return digest
    by_paper: dict[str, list[str]] = {}
    for user, pid in fits.items():
        by_paper.setdefault(pid, []).append(user)
    items = tuple(
        replace(i, mentions=tuple(sorted(by_paper.get(i.paper.id, ())))) for i in digest.items
    )
    return replace(digest, items=items)


def mark(store: Store, ranker: Scorer | None, digests: Sequence[Digest]) -> list[Digest]:
    """Every digest with its mentions, the members of all of them read at once."""
    shared = [d for d in digests if d.items and not d.channel.ref.personal]
    if ranker is None or not shared:
        return list(digests)
    members = members_of(store, [d.channel.id for d in shared])
    return [with_mentions(d, ranker, members.get(d.channel.id, ())) for d in digests]
