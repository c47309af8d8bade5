"""HTML pictures of what arrived at Slack and Discord: Block Kit and embeds as each app shows them.

Used by docs/make_pictures.py only. It draws the payloads the bot really sent (taken from the
test fakes), so a picture changes when the renderers do; it imitates each app's look closely
enough to be recognised, not pixel for pixel.
"""

from __future__ import annotations

import html
import re

# Slack mrkdwn: the text arrives with &, <, > as entities, so only links are markup in angles.
SLACK_LINK = re.compile(r"&lt;|<([^|>]+)\|([^>]+)>|<([^>]+)>")
# A markup character opens after a space or the start, closes before a space, punctuation or the
# end; the bot puts a zero-width space after every one in paper text so none of those pair up.
SLACK_MARKS = [
    (re.compile(r"(?<![\w*])\*(?=[^\s\u200b*])(.+?)(?<=\S)\*(?![\w\u200b])"), "b"),
    (re.compile(r"(?<![\w_])_(?=[^\s\u200b_])(.+?)(?<=\S)_(?![\w\u200b])"), "i"),
    (re.compile(r"(?<![\w~])~(?=[^\s\u200b~])(.+?)(?<=\S)~(?![\w\u200b])"), "s"),
    (re.compile(r"`([^`\n]+)`"), "code"),
]
# Discord markdown: a backslash makes the next punctuation character literal.
DISCORD_ESCAPE = re.compile(r"\\([^0-9A-Za-z\s])")
DISCORD_MARKS = [
    (re.compile(r"`([^`\n]+)`"), "code"),
    (re.compile(r"\*\*(.+?)\*\*"), "b"),
    (re.compile(r"(?<!\w)\*(?=\S)(.+?)(?<=\S)\*(?!\w)"), "i"),
    (re.compile(r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)"), "i"),
    (re.compile(r"~~(.+?)~~"), "s"),
]
BUTTON_STYLES = {1: "primary", 2: "secondary", 3: "success", 4: "danger", 5: "link"}


def _marks(text: str, marks: list[tuple[re.Pattern, str]]) -> str:
    for pattern, tag in marks:
        text = pattern.sub(lambda m, t=tag: f"<{t}>{m.group(1)}</{t}>", text)
    return text.replace("\n", "<br>")


def mrkdwn(text: str) -> str:
    """Slack mrkdwn as HTML: links, *bold*, _italic_, ~strike~, `code`."""

    def link(m: re.Match) -> str:
        if m.group(0) == "&lt;":
            return m.group(0)
        url, label = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(3))
        return f'<a href="{url}">{label}</a>'  # already escaped, as all of Slack's text

    # Entities are already HTML; quotes are the only characters left to escape.
    return _marks(SLACK_LINK.sub(link, text.replace('"', "&quot;")), SLACK_MARKS)


def markdown(text: str) -> str:
    """Discord markdown as HTML: backslash escapes, **bold**, *italic*, ~~strike~~, `code`."""
    literal: list[str] = []

    def keep(m: re.Match) -> str:
        literal.append(m.group(1))
        return f"\ue000{len(literal) - 1}\ue001"

    out = _marks(html.escape(DISCORD_ESCAPE.sub(keep, text), quote=False), DISCORD_MARKS)
    return re.sub("\ue000(\\d+)\ue001", lambda m: html.escape(literal[int(m.group(1))]), out)


def slack_block(block: dict) -> str:
    """One Block Kit block of the kinds the bot sends."""
    kind = block["type"]
    if kind == "header":
        return f'<div class="s-header">{html.escape(block["text"]["text"])}</div>'
    if kind == "section":
        return f'<div class="s-section">{mrkdwn(block["text"]["text"])}</div>'
    if kind == "context":
        parts = "".join(f"<span>{mrkdwn(e['text'])}</span>" for e in block["elements"])
        return f'<div class="s-context">{parts}</div>'
    if kind == "divider":
        return '<hr class="s-divider">'
    if kind == "actions":
        buttons = "".join(
            f'<span class="s-button {e.get("style", "")}">{html.escape(e["text"]["text"])}'
            + (' <span class="out">↗</span>' if "url" in e else "")
            + "</span>"
            for e in block["elements"]
        )
        return f'<div class="s-actions">{buttons}</div>'
    return f'<div class="s-section">[{html.escape(kind)} block]</div>'


def slack_page(posts: list[dict], channel: str, time: str) -> str:
    """The chat.postMessage calls as a Slack channel shows them."""
    messages = "".join(
        '<div class="s-msg"><div class="s-avatar">📚</div><div class="s-body">'
        f'<div class="s-meta"><b>digestbot</b><span class="s-app">APP</span>'
        f'<span class="s-time">{time}</span></div>'
        + "".join(slack_block(b) for b in post["blocks"])
        + "</div></div>"
        for post in posts
    )
    return _page(
        SLACK_CSS, f'<div class="s-top"># {channel}</div><div class="s-list">{messages}</div>'
    )


def discord_embed(embed: dict) -> str:
    """One embed: colour bar, title (linked when it has a url), description, fields, footer."""
    parts = []
    if title := embed.get("title"):
        text = markdown(title)
        if url := embed.get("url"):
            text = f'<a href="{html.escape(url)}">{text}</a>'
        parts.append(f'<div class="d-title">{text}</div>')
    if description := embed.get("description"):
        parts.append(f'<div class="d-desc">{markdown(description)}</div>')
    for field in embed.get("fields", []):
        parts.append(
            f'<div class="d-field"><div class="d-fname">{markdown(field["name"])}</div>'
            f'<div class="d-fvalue">{markdown(field["value"])}</div></div>'
        )
    if footer := (embed.get("footer") or {}).get("text"):
        parts.append(f'<div class="d-footer">{html.escape(footer)}</div>')
    colour = f"#{embed['color']:06x}" if embed.get("color") is not None else "#1e1f22"
    return f'<div class="d-embed" style="border-left-color:{colour}">{"".join(parts)}</div>'


def discord_row(row: dict) -> str:
    """An action row of buttons, styled as Discord styles them."""
    buttons = "".join(
        f'<span class="d-button {BUTTON_STYLES.get(c.get("style"), "secondary")}">'
        + html.escape(c.get("label") or "")
        + (' <span class="out">↗</span>' if c.get("style") == 5 else "")
        + "</span>"
        for c in row["components"]
    )
    return f'<div class="d-row">{buttons}</div>'


def _rows(rows: list[dict]) -> str:
    return f'<div class="d-rows">{"".join(discord_row(r) for r in rows)}</div>' if rows else ""


def discord_page(posts: list[dict], channel: str, time: str) -> str:
    """The messages POSTed to a channel as Discord's dark theme shows them."""
    messages = "".join(
        '<div class="d-msg"><div class="d-avatar">📚</div><div class="d-body">'
        f'<div class="d-meta"><b>digestbot</b><span class="d-app">APP</span>'
        f'<span class="d-time">Today at {time}</span></div>'
        + (
            f'<div class="d-content">{markdown(post["content"])}</div>'
            if post.get("content")
            else ""
        )
        + "".join(discord_embed(e) for e in post.get("embeds") or [])
        + _rows(post.get("components") or [])
        + "</div></div>"
        for post in posts
    )
    return _page(
        DISCORD_CSS, f'<div class="d-top"># {channel}</div><div class="d-list">{messages}</div>'
    )


def _page(css: str, body: str) -> str:
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><style>{COMMON_CSS}{css}</style>'
        f'</head><body><div id="shot">{body}</div></body></html>'
    )


COMMON_CSS = """
* { box-sizing: border-box; }
body { margin: 0; }
#shot { display: flow-root; }
a { text-decoration: none; }
code { font-family: 'DejaVu Sans Mono', monospace; font-size: 85%; padding: 1px 3px;
       border-radius: 3px; }
.out { font-size: 11px; opacity: .7; font-family: 'DejaVu Sans', sans-serif; }  /* text, not emoji */
"""

SLACK_CSS = """
body { background: #fff; color: #1d1c1d;
       font: 15px/1.47 Lato, 'Noto Sans', 'Noto Color Emoji', sans-serif; }
#shot { border: 1px solid #ddd; border-radius: 8px; }  /* white on a white page needs an edge */
.s-top { padding: 12px 20px; font-weight: 900; font-size: 18px; border-bottom: 1px solid #ddd; }
.s-list { padding: 8px 0 16px; }
.s-msg { display: flex; padding: 8px 20px; }
.s-avatar { flex: none; width: 36px; height: 36px; border-radius: 6px; background: #e8f0fe;
            margin-right: 8px; text-align: center; font-size: 21px; line-height: 36px; }
.s-body { flex: 1; min-width: 0; }
.s-meta b { font-weight: 900; }
.s-app { background: #e8e8e8; color: #616061; font-size: 10px; font-weight: 700;
         padding: 1px 3px; border-radius: 2px; margin: 0 6px; vertical-align: 2px; }
.s-time { color: #616061; font-size: 12px; }
.s-header { font-size: 18px; font-weight: 900; line-height: 1.33; margin: 4px 0 8px; }
.s-section { margin: 4px 0; white-space: normal; }
.s-section a { color: #1264a3; }
.s-context { color: #616061; font-size: 13px; margin: 4px 0; }
.s-context code { background: #f6f6f6; color: #e01e5a; border: 1px solid #ddd; }
.s-section code { background: #f6f6f6; color: #e01e5a; border: 1px solid #ddd; }
.s-actions { margin: 8px 0 12px; display: flex; flex-wrap: wrap; gap: 8px; }
.s-button { display: inline-block; height: 28px; line-height: 26px; padding: 0 12px;
            border: 1px solid #c6c6c6; border-radius: 4px; font-size: 13px; font-weight: 700;
            background: #fff; }
.s-button.primary { background: #007a5a; border-color: #007a5a; color: #fff; }
.s-button.danger { background: #e01e5a; border-color: #e01e5a; color: #fff; }
.s-divider { border: 0; border-top: 1px solid #ddd; margin: 12px 0; }
"""

DISCORD_CSS = """
body { background: #313338; color: #dbdee1;
       font: 15px/1.375 'Noto Sans', 'Noto Color Emoji', sans-serif; }
.d-top { padding: 12px 16px; color: #f2f3f5; font-weight: 700; font-size: 16px;
         border-bottom: 1px solid #26282c; box-shadow: 0 1px 0 rgba(0,0,0,.2); }
.d-list { padding: 8px 0 16px; }
.d-msg { display: flex; padding: 6px 16px; }
.d-avatar { flex: none; width: 40px; height: 40px; border-radius: 50%; background: #5865f2;
            margin-right: 16px; text-align: center; font-size: 21px; line-height: 40px; }
.d-body { flex: 1; min-width: 0; }
.d-meta b { color: #f2f3f5; font-weight: 600; }
.d-app { background: #5865f2; color: #fff; font-size: 10px; font-weight: 600;
         padding: 1px 4px; border-radius: 3px; margin: 0 6px; vertical-align: 2px; }
.d-time { color: #949ba4; font-size: 12px; }
.d-content { margin: 2px 0; }
.d-embed { max-width: 520px; background: #2b2d31; border-left: 4px solid #1e1f22;
           border-radius: 4px; padding: 8px 16px 16px 12px; margin-top: 8px; }
.d-title { color: #f2f3f5; font-weight: 600; font-size: 16px; margin-top: 8px; }
.d-title a { color: #00a8fc; }
.d-desc { font-size: 14px; margin-top: 8px; }
.d-field { margin-top: 8px; font-size: 14px; }
.d-fname { color: #f2f3f5; font-weight: 600; margin-bottom: 2px; }
.d-footer { color: #b5bac1; font-size: 12px; margin-top: 8px; }
.d-embed code, .d-desc code { background: #1e1f22; }
.d-rows { margin-top: 4px; }
.d-row { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 8px; }
.d-button { display: inline-block; height: 32px; line-height: 32px; padding: 0 16px;
            border-radius: 3px; font-size: 14px; font-weight: 500; color: #fff;
            min-width: 60px; text-align: center; }
.d-button.secondary, .d-button.link { background: #4e5058; }
.d-button.primary { background: #5865f2; }
.d-button.success { background: #248046; }
.d-button.danger { background: #da373c; }
"""
