"""`/papers` subcommands about papers: help, search, paper, similar, why, topics, feedback."""

from __future__ import annotations

import shlex
from dataclasses import replace

from bot.commands.core import Args, Commands, Context, command, help_reply
from bot.commands.handlers_mentions import mention_note
from bot.commands.replies import FOLLOWS_NOTHING, Action, Reply, card, error, nothing_close
from digest.delivery.backlog import outlook
from digest.errors import DigestError, NotFoundError
from digest.rank.results import Filters  # not .engine: listings must not load the ranker
from digest.text.characters import has_visible
from digest.text.headline import shorten
from digest.text.numbers import is_number, numeric_text, plural, whole_number

PER_PAGE = 5


def _filters(args: Args) -> Filters:
    if args.filter_errors:
        raise DigestError(args.filter_errors[0])
    year = args.filters.get("year")
    year = numeric_text(year) if year is not None else None
    if year is not None and (not is_number(year) or len(year) != 4):
        raise DigestError(f"year: must be a four-digit year, got {year[:10]!r}.")
    return Filters(
        venue=args.filters.get("venue"),
        year=int(year) if year else None,
        author=args.filters.get("author"),
    )


def _page_arg(args: Args) -> tuple[int, Args]:
    """The page: a typed ``page`` option, else a trailing `page:N` (from the Prev/Next buttons)."""
    if "page" in args.options:
        return _positive_page(str(args.options["page"])), args
    words = list(args.words)
    page = 1
    if words and words[-1].lower().startswith("page:"):
        page = _positive_page(words.pop()[5:])
    return page, Args(args.raw, tuple(words), args.filters, args.options, args.filter_errors)


def _positive_page(text: str) -> int:
    """A page number from `page:N`; anything else is the user's mistake, said plainly."""
    return whole_number(text, "page", 1)


def _page_command(args: Args, page: int) -> str:
    """The search as text again, quoted so that `author:"Ada Lovelace"` parses back whole."""
    filters = [f"{k}:{shlex.quote(v)}" for k, v in args.filters.items()]
    return " ".join(["search", shlex.join(args.words), *filters, f"page:{page}"])


@command("help", "help", "this list")
def help_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    return help_reply()


@command(
    "search",
    "search <query> [venue:X] [year:YYYY] [author:NAME] [page:N]",
    "search every stored paper (5 a page)",
)
def search_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    page, args = _page_arg(args)
    filters = _filters(args)  # first: `search venue:` is a missing value, not a missing query
    if not has_visible(args.text):
        return error("Search for what? e.g. `/papers search sparse autoencoders year:2026`")
    per_page = int(args.options.get("per_page", PER_PAGE))
    view = cmds.papers.search(args.text, filters, page, per_page)
    r = view.result
    if not r.hits and r.total:
        return error(
            f"There is no page {page}: {plural(r.total, 'paper')} match, {plural(r.pages, 'page')}."
        )
    if not r.hits:
        return error(r.message or f"No papers match {args.text[:60]!r} yet.")
    first = (r.page - 1) * r.per_page
    cards = tuple(
        card(view.papers[h.paper_id], h.why, first + i, h.score) for i, h in enumerate(r.hits, 1)
    )
    actions = []
    if r.page > 1:
        prev = r.page - 1
        actions.append(Action("page", "◀ Prev", _page_command(args, prev), page=prev))
    if r.page < r.pages:
        nxt = r.page + 1
        actions.append(Action("page", "Next ▶", _page_command(args, nxt), page=nxt))
    return Reply(
        # the note on its own line: a platform that splits a long text keeps the count whole
        text=f"{r.message + chr(10) if r.message else ''}{plural(r.total, 'paper')} "
        f"{'matches' if r.total == 1 else 'match'}; page {r.page} of {r.pages}.",
        title=f"🔎 {args.text[:80]}",
        cards=cards,
        actions=tuple(actions),
    )


@command("paper", "paper <id>", "one paper in full")
def paper_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if not args.words:
        return error("Which paper? e.g. `/papers paper 2401.01234`")
    p = cmds.papers.paper(args.words[0])
    c = replace(card(p, feedback=True), snippet="")  # the abstract is the text: show it once
    return Reply(text=p.abstract[:2900], title=p.title, cards=(c,))


@command("similar", "similar <id>", "papers like this one")
def similar_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if not args.words:
        return error("Similar to which paper? e.g. `/papers similar 2401.01234`")
    paper, hits, papers = cmds.papers.similar(args.words[0], k=PER_PAGE)
    if not hits:  # every stored paper is below the likeness floor (``profile.close_floor``)
        return nothing_close(paper.title)
    cards = tuple(
        card(papers[h.paper_id], h.why, i, h.score)
        for i, h in enumerate(hits, 1)
        if h.paper_id in papers
    )
    return Reply(
        text=f"Papers most like {shorten(paper.title, 120)!r}:", title="More like this", cards=cards
    )


@command("why", "why <id>", "why a paper would (or would not) reach this channel")
def why_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    if not args.words:
        return error("Why which paper? e.g. `/papers why 2401.01234`")
    paper = cmds.papers.paper(args.words[0])
    channel = cmds.channels.channel(ctx.ref)
    if cmds.channels.follows_nothing(channel) or cmds.papers.ranker() is None:
        return error(FOLLOWS_NOTHING)
    seen = outlook(cmds.channels, channel, paper.id, ctx.now)
    why = f"\nWhy: {seen.why}" if seen.why else ""
    return Reply(text=f"{seen.verdict}{why}{mention_note(cmds, ctx, paper.id)}", title=paper.title)


@command("topics", "topics", "suggested topics mined from the stored papers")
def topics_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    ranker = cmds.papers.ranker()
    if ranker is None:
        return error("No papers stored yet.")
    lines = [f"• *{t.label}* — {', '.join(t.terms)}" for t in ranker.suggested_topics()]
    return Reply(
        text="\n".join(lines) + "\nFollow one with `/papers subscribe <topic>`.",
        title="Suggested topics",
    )


MAX_VOTES = 25  # one command votes on at most a digest's worth of papers


def _vote(cmds: Commands, ctx: Context, args: Args, value: int) -> Reply:
    """Vote on every paper listed; all ids are checked first, so a typo records nothing."""
    ids = list(dict.fromkeys(w for word in args.words for w in word.split(",") if w))
    if not ids:
        return error("Vote on which paper? e.g. `/papers up 2401.01234`")
    if len(ids) > MAX_VOTES:
        return error(f"Vote on at most {MAX_VOTES} papers at once (got {len(ids)}).")
    try:
        papers = [cmds.papers.paper(i) for i in ids]  # an unknown id stops here, before any vote
    except NotFoundError as exc:
        return error(f"{exc} No vote recorded." if len(ids) > 1 else str(exc))
    done = [(p, cmds.channels.vote(ctx.ref, ctx.user, p.id, value)) for p in papers]
    if len(done) == 1:
        paper, now = done[0]
        if now == 0:
            return Reply(text=f"Vote withdrawn for {shorten(paper.title, 100)!r}.")
        mark = "👍" if now > 0 else "👎"
        return Reply(
            text=f"{mark} noted for {shorten(paper.title, 100)!r}; future digests here will learn from it."
        )
    marks = {1: "👍", -1: "👎", 0: "withdrawn:"}
    lines = [f"{marks[now]} {shorten(paper.title, 70)!r}" for paper, now in done]
    return Reply(text="\n".join([_votes_head([now for _, now in done]), *lines]))


def _votes_head(now: list[int]) -> str:
    """'2 votes, 1 withdrawn; ...': only votes in force count (the same vote again withdraws it)."""
    cast = sum(1 for v in now if v)
    withdrawn = len(now) - cast
    if not cast:
        return f"{plural(withdrawn, 'vote')} withdrawn."
    head = plural(cast, "vote") + (f", {withdrawn} withdrawn" if withdrawn else "")
    return f"{head}; future digests here will learn from {'it' if cast == 1 else 'them'}."


@command("up", "up <id> [id…]", "👍 papers (the digest buttons do the same)")
def up_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    return _vote(cmds, ctx, args, 1)


@command("down", "down <id> [id…]", "👎 papers")
def down_cmd(cmds: Commands, ctx: Context, args: Args) -> Reply:
    return _vote(cmds, ctx, args, -1)
