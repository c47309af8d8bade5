"""Discord's rules for application-command JSON (what `PUT .../commands` accepts): one string per
broken rule. Sources: discord.com/developers/docs interactions/application-commands
(naming, option types and nesting, choices, limits, contexts and integration types)."""

from __future__ import annotations

import re

NAME = re.compile(r"^[-_\w]{1,32}$")  # chat-input names: lower case letters, digits, - and _
MAX_COMMANDS = 100
MAX_OPTIONS = 25
MAX_CHOICES = 25
MAX_DESCRIPTION = 100
MAX_COMMAND_CHARS = 4000  # names, descriptions, choice names and values, summed per command
SUB_COMMAND, GROUP = 1, 2
VALUE_TYPES = {3, 4, 5, 6, 7, 8, 9, 10, 11}
CHOICE_TYPES = {3: str, 4: int, 10: (int, float)}
CONTEXTS, INSTALLS = {0, 1, 2}, {0, 1}


def _name(where: str, name: object) -> list[str]:
    if not isinstance(name, str) or not NAME.match(name) or name != name.lower():
        return [f"{where}: name {name!r} must be 1-32 lower-case letters, digits, - or _"]
    return []


def _description(where: str, text: object) -> list[str]:
    if not isinstance(text, str) or not 1 <= len(text) <= MAX_DESCRIPTION:
        return [f"{where}: description must be 1-{MAX_DESCRIPTION} characters"]
    return []


def _choices(where: str, o: dict) -> list[str]:
    out, choices = [], o.get("choices") or []
    if len(choices) > MAX_CHOICES:
        out.append(f"{where}: over {MAX_CHOICES} choices")
    if choices and o.get("autocomplete"):
        out.append(f"{where}: choices and autocomplete cannot be combined")
    if choices and o["type"] not in CHOICE_TYPES:
        out.append(f"{where}: option type {o['type']} cannot have choices")
    for c in choices:
        value, kind = c.get("value"), CHOICE_TYPES.get(o["type"], object)
        if not 1 <= len(str(c.get("name", ""))) <= 100:
            out.append(f"{where}: choice name must be 1-100 characters")
        if not isinstance(value, kind) or (isinstance(value, str) and len(value) > 100):
            out.append(f"{where}: choice value {str(value)[:20]!r} has the wrong type or length")
    return out


def _value_option(where: str, o: dict) -> list[str]:
    out = _choices(where, o)
    if o.get("type") not in VALUE_TYPES:
        out.append(f"{where}: unknown option type {o.get('type')!r}")
    for key in ("min_length", "max_length"):
        if key in o and not 0 <= o[key] <= 6000:
            out.append(f"{where}: {key} must be 0-6000")
    if "min_value" in o and "max_value" in o and o["min_value"] > o["max_value"]:
        out.append(f"{where}: min_value above max_value")
    return out


def _options(where: str, options: list[dict], depth: int) -> list[str]:
    """One level of options: counts, names, order, nesting."""
    out = [f"{where}: over {MAX_OPTIONS} options"] if len(options) > MAX_OPTIONS else []
    names = [o.get("name") for o in options]
    out += [
        f"{where}: duplicate option {n!r}" for n in sorted({n for n in names if names.count(n) > 1})
    ]
    subs = [o for o in options if o.get("type") in (SUB_COMMAND, GROUP)]
    if subs and len(subs) != len(options):
        out.append(f"{where}: subcommands cannot sit beside value options")
    seen_optional = False
    for o in options:
        here = f"{where} {o.get('name')}"
        out += _name(here, o.get("name")) + _description(here, o.get("description"))
        if o.get("type") == GROUP and depth > 0:
            out.append(f"{here}: a subcommand group cannot be nested in a group")
        if o.get("type") in (SUB_COMMAND, GROUP):
            inner = o.get("options") or []
            if o["type"] == GROUP and (
                not inner or any(x.get("type") != SUB_COMMAND for x in inner)
            ):
                out.append(f"{here}: a group holds 1-25 subcommands only")
            out += _options(here, inner, depth + 1)
            continue
        if o.get("required") and seen_optional:
            out.append(f"{here}: required options must come before optional ones")
        seen_optional |= not o.get("required")
        out += _value_option(here, o)
    return out


def _chars(c: dict) -> int:
    """Characters Discord counts towards a command's 4,000."""
    total = len(c.get("name", "")) + len(c.get("description", ""))
    for o in c.get("options") or []:
        total += _chars(o)
        total += sum(
            len(str(ch.get("name", ""))) + len(str(ch.get("value", "")))
            for ch in o.get("choices") or []
        )
    return total


def command_problems(tree: list[dict]) -> list[str]:
    """Every rule the command list breaks; [] when Discord would accept it."""
    out = [f"over {MAX_COMMANDS} commands"] if len(tree) > MAX_COMMANDS else []
    names = [c.get("name") for c in tree]
    out += [f"duplicate command {n!r}" for n in sorted({n for n in names if names.count(n) > 1})]
    for c in tree:
        where = f"/{c.get('name')}"
        out += _name(where, c.get("name")) + _description(where, c.get("description"))
        out += _options(where, c.get("options") or [], 0)
        if _chars(c) > MAX_COMMAND_CHARS:
            out.append(f"{where}: {_chars(c)} characters, over {MAX_COMMAND_CHARS}")
        if not set(c.get("contexts") or []) <= CONTEXTS:
            out.append(f"{where}: unknown contexts {c.get('contexts')}")
        if not set(c.get("integration_types") or []) <= INSTALLS:
            out.append(f"{where}: unknown integration_types {c.get('integration_types')}")
    return out
