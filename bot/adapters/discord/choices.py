"""Autocomplete for `/papers` options: papers, subscriptions (by number), timezones and days."""

from __future__ import annotations

import asyncio
from functools import lru_cache
from zoneinfo import available_timezones

import discord
from discord import app_commands

from bot.adapters.deps import Deps
from bot.adapters.discord.command_rules import MAX_CHOICES
from bot.adapters.discord.interact import context
from digest.models import SubscriptionKind

COMMON_ZONES = (
    "UTC",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Paris",
    "America/New_York",
    "America/Chicago",
    "America/Los_Angeles",
    "Asia/Tokyo",
    "Asia/Shanghai",
    "Asia/Kolkata",
    "Australia/Sydney",
)
#: Seconds a paper search may take inside an autocomplete (Discord waits 3 s for the answer).
SEARCH_BUDGET = 2.0
#: Seconds the whole autocomplete answer may take, whatever is slow (the thread pool, the database).
ANSWER_BUDGET = 2.5
DAYS = ("daily", "weekdays", "weekends", "mon,wed,fri", "tue,thu", "mon", "fri")


def _choice(name: str, value: str) -> app_commands.Choice[str]:
    """A choice within Discord's limits (names and values 1-100 characters)."""
    return app_commands.Choice(name=name[:100], value=value[:100])


def _subscription_names(deps: Deps, i: discord.Interaction, personal: bool) -> list[str]:
    ctx = context(deps, i)
    subs = deps.channels.subscriptions(ctx.dm if personal and ctx.dm else ctx.ref)
    return [
        s.text if s.kind is SubscriptionKind.TOPIC else f"{s.kind.value}:{s.text}" for s in subs
    ]


async def subscription_choices(
    deps: Deps, i: discord.Interaction, current: str, personal: bool = False
) -> list[app_commands.Choice[str]]:
    """Subscriptions matching what was typed; the value is the number, so long topics still work."""
    names = await asyncio.to_thread(_subscription_names, deps, i, personal)
    out = [
        _choice(f"{n}. {name}", str(n))
        for n, name in enumerate(names, 1)
        if current.lower() in f"{n}. {name}".lower()
    ]
    if "all".startswith(current.lower().strip()):
        out.append(_choice("all (everything listed)", "all"))
    return out[:MAX_CHOICES]


async def paper_choices(deps: Deps, current: str) -> list[app_commands.Choice[str]]:
    """Papers whose id or title matches what was typed: the id is sent, the title is shown.

    Always answered within ``ANSWER_BUDGET`` with what is known by then: the ranked search when
    an index is complete, a title look-up in the database when none is (a cold start), or
    nothing when even that is slow; Discord shows no choices for an answer after 3 s.
    """
    if len(current.strip()) < 2:
        return []
    try:
        found = await asyncio.wait_for(_papers_matching(deps, current), ANSWER_BUDGET)
    except TimeoutError:
        return []
    seen, out = set(), []
    for pid, title in found:
        if pid not in seen and len(pid) <= 100:
            seen.add(pid)
            out.append(app_commands.Choice(name=f"{title[:80]} ({pid})"[:100], value=pid))
    return out[:MAX_CHOICES]


async def _papers_matching(deps: Deps, current: str) -> list[tuple[str, str]]:
    """(id, title) of the paper with that id, then the best matches of what was typed."""
    papers = deps.channels.papers
    exact = await asyncio.to_thread(papers.find_paper, current.strip())
    found = [(exact.id, exact.title)] if exact else []
    try:  # search_ready never waits on an index build; the budget covers a slow database
        view = await asyncio.wait_for(
            asyncio.to_thread(papers.search_ready, current), SEARCH_BUDGET
        )
    except TimeoutError:
        return found
    if view is None:  # no index complete yet: titles containing what was typed
        return found + await asyncio.to_thread(papers.titles_like, current)
    hits = [view.papers[h.paper_id] for h in view.result.hits if h.paper_id in view.papers]
    return found + [(p.id, p.title) for p in hits]


@lru_cache(maxsize=1)
def _zones() -> tuple[str, ...]:
    return tuple(sorted(z for z in available_timezones() if "/" in z or z == "UTC"))


def timezone_choices(current: str) -> list[app_commands.Choice[str]]:
    """IANA names containing what was typed (spaces count as underscores); prefix matches first."""
    typed = current.strip().replace(" ", "_").lower()
    if not typed:
        return [_choice(z, z) for z in COMMON_ZONES]
    hits = [z for z in _zones() if typed in z.lower()]
    hits.sort(key=lambda z: (not z.lower().split("/")[-1].startswith(typed), z))
    return [_choice(z, z) for z in hits[:MAX_CHOICES]]


def days_choices(current: str) -> list[app_commands.Choice[str]]:
    """Common day sets matching what was typed, and the typed value itself when it is new."""
    typed = current.strip().lower()
    out = [d for d in DAYS if typed in d]
    if typed and typed not in out:
        out.insert(0, typed)
    return [_choice(d, d) for d in out[:MAX_CHOICES]]
