"""Autocomplete for `/papers` options: papers, subscriptions (by number), timezones and days."""

from __future__ import annotations

import asyncio
from functools import lru_cache
from zoneinfo import available_timezones

import discord
from discord import app_commands

from bot.adapters.discord.command_rules import MAX_CHOICES
from bot.adapters.discord.interact import DiscordDeps, context
from digest.models import SubscriptionKind

COMMON_ZONES = ("UTC", "Europe/London", "Europe/Berlin", "Europe/Paris", "America/New_York",
                "America/Chicago", "America/Los_Angeles", "Asia/Tokyo", "Asia/Shanghai",
                "Asia/Kolkata", "Australia/Sydney")  # fmt: skip
#: Seconds a paper search may take inside an autocomplete (Discord waits 3 s for the answer).
SEARCH_BUDGET = 2.0
DAYS = ("daily", "weekdays", "weekends", "mon,wed,fri", "tue,thu", "mon", "fri")


def _choice(name: str, value: str) -> app_commands.Choice[str]:
    """A choice within Discord's limits (names and values 1-100 characters)."""
    return app_commands.Choice(name=name[:100], value=value[:100])


def _subscription_names(deps: DiscordDeps, i: discord.Interaction, personal: bool) -> list[str]:
    ctx = context(deps, i)
    subs = deps.channels.subscriptions(ctx.dm if personal and ctx.dm else ctx.ref)
    return [
        s.text if s.kind is SubscriptionKind.TOPIC else f"{s.kind.value}:{s.text}" for s in subs
    ]


async def subscription_choices(
    deps: DiscordDeps, i: discord.Interaction, current: str, personal: bool = False
) -> list[app_commands.Choice[str]]:
    """Subscriptions matching what was typed; the value is the number, so long topics still work."""
    names = await asyncio.to_thread(_subscription_names, deps, i, personal)
    out = [_choice(f"{n}. {name}", str(n)) for n, name in enumerate(names, 1)
           if current.lower() in f"{n}. {name}".lower()]  # fmt: skip
    if "all".startswith(current.lower().strip()):
        out.append(_choice("all (everything listed)", "all"))
    return out[:MAX_CHOICES]


async def paper_choices(deps: DiscordDeps, current: str) -> list[app_commands.Choice[str]]:
    """Papers whose id or title matches what was typed: the id is sent, the title is shown."""
    if len(current.strip()) < 2:
        return []
    exact = await asyncio.to_thread(deps.channels.store.papers.get, current.strip())
    search = asyncio.to_thread(deps.channels.papers.search, current, None, 1, 10)
    try:
        view = await asyncio.wait_for(search, SEARCH_BUDGET)
        hits = [view.papers[h.paper_id] for h in view.result.hits if h.paper_id in view.papers]
    except TimeoutError:  # Discord drops an answer after 3 s: offer what is known by then
        hits = []
    found = ([exact] if exact else []) + hits
    seen, out = set(), []
    for p in found:
        if p.id not in seen and len(p.id) <= 100:
            seen.add(p.id)
            out.append(app_commands.Choice(name=f"{p.title[:80]} ({p.id})"[:100], value=p.id))
    return out[:MAX_CHOICES]


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
