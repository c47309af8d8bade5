"""`digestbot` commands for papers: ingest, browse (`papers list` / `papers show`) and search."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli.main import DbOption, app, err, out, papers_app, wired
from bot.cli.options import MAX_LIST, MAX_OFFSET, MAX_PAGE, MAX_RESULTS, read_queries, whole
from digest.errors import DigestError
from digest.text.numbers import plural

if TYPE_CHECKING:
    from rich.progress import Progress

    from digest.ingest.pipeline import IngestReport
    from digest.models import Paper
    from digest.papers.service import SearchView
    from digest.rank.ranker import Hit


def _report_line(r: IngestReport) -> str:
    skipped = sum(not p.warning for p in r.problems)
    # with an LLM endpoint configured: how many abstractive TL;DRs this run wrote (the rest of
    # the papers show the extractive line)
    tldrs = "" if r.tldrs is None else f", {plural(r.tldrs, 'TL;DR line')} written"
    return (
        f"{r.source}: {r.added} new, {r.updated} updated, {r.merged} merged, "
        f"{r.unchanged} already stored ({r.parsed} read, {skipped} skipped){tldrs}"
    )


def _print_problems(source: str, report: IngestReport, shown: int = 20) -> None:
    """Per-line problems on stderr: ``file:line: message`` (warnings say so)."""
    for p in report.problems[:shown]:
        kind = "warning: " if p.warning else ""
        err.print(f"{source}:{p.line}: {kind}{p.message}", markup=False)
    if len(report.problems) > shown:
        err.print(f"{source}: … and {len(report.problems) - shown} more", markup=False)


def _bar() -> Progress:
    """A progress bar on a terminal (stderr); nothing at all on a pipe."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err.console(),
        transient=True,
        disable=not err.is_terminal,
    )


@app.command("ingest")
def ingest_cmd(
    sources: Annotated[
        list[str],
        typer.Argument(help="Files, or arxiv:QUERY, arxiv-rss:CATEGORY, openreview:VENUE_ID."),
    ],
    fmt: Annotated[
        str, typer.Option("--format", help="auto|neurips-list|jsonl|csv|arxiv|arxiv-rss|openreview")
    ] = "auto",
    db: DbOption = None,
) -> None:
    """Read papers into the store; re-ingesting a source adds nothing new.

    Exit code 0: every line stored; 1: good lines stored, some skipped (listed with line numbers).
    """
    service = wired(db).papers
    skipped = 0
    for source in sources:
        with _bar() as bar:
            task = bar.add_task(f"ingesting {source}", total=None)
            report = service.ingest(source, fmt, progress=lambda n, t=task: bar.advance(t, n))
        _print_problems(source, report)
        skipped += sum(not p.warning for p in report.problems)
        out.print(_report_line(report), markup=False)
    service.record_ingest()
    with _bar() as bar:
        bar.add_task("fitting the search index", total=None)
        service.ranker()  # fit or extend the index now, so the first search is fast
    if skipped:
        err.print(f"{skipped} line(s) skipped; the rest were stored.", markup=False)
        raise typer.Exit(1)


@papers_app.command("list")
def papers_list(
    limit: Annotated[int, typer.Option("--limit", "-n", parser=whole("--limit", 1, MAX_LIST))] = 20,
    offset: Annotated[int, typer.Option("--offset", parser=whole("--offset", 0, MAX_OFFSET))] = 0,
    db: DbOption = None,
) -> None:
    """Most recently ingested papers."""
    from bot.adapters.render_text import paper_line

    papers = wired(db).papers.papers(limit, offset)
    if not papers and offset == 0:
        out.print(
            "No papers stored yet; `digestbot ingest FILE` (or `digestbot run`) adds some.",
            markup=False,
        )
    for paper in papers:
        out.print(paper_line(paper), markup=False)


@papers_app.command("show")
def papers_show(paper_id: str, db: DbOption = None) -> None:
    """One paper in full."""
    from bot.adapters.render_text import paper_detail

    out.print(paper_detail(wired(db).papers.paper(paper_id)), markup=False)


def _hit_json(hit: Hit, papers: dict[str, Paper]) -> dict:
    from digest.tldr.extractive import tldr_line

    paper = papers.get(hit.paper_id)
    return {
        "id": hit.paper_id,
        "title": paper.title if paper else "",
        "tldr": tldr_line(paper) if paper else "",
        "score": hit.score,
        "why": hit.why,
    }


@app.command("search")
def search_cmd(
    query: Annotated[
        str | None, typer.Argument(help="Free text, e.g. 'sparse autoencoders'.")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-k", parser=whole("--limit", 1, MAX_RESULTS))
    ] = 10,
    page: Annotated[int, typer.Option("--page", parser=whole("--page", 1, MAX_PAGE))] = 1,
    venue: Annotated[str | None, typer.Option("--venue")] = None,
    year: Annotated[int | None, typer.Option("--year", parser=whole("--year", 1000, 9999))] = None,
    author: Annotated[str | None, typer.Option("--author")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    queries_file: Annotated[
        Path | None,
        typer.Option("--queries-file", help="One query per line (text or JSON with 'query')."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Search every stored paper with the same ranker the digests use."""
    from digest.text.characters import has_surrogates, has_visible

    if (query is None) == (queries_file is None):
        raise DigestError("Give either a QUERY or --queries-file FILE.")
    if query is not None and not has_visible(query):
        raise DigestError(
            'Type a topic or a few words to search for, e.g. digestbot search "graph neural networks".'
        )
    if query is not None and has_surrogates(query):  # bytes on the command line that are not UTF-8
        raise DigestError("The query holds a broken character (not UTF-8); please retype it.")
    from digest.rank.ranker import Filters

    service = wired(db).papers
    filters = Filters(venue=venue, year=year, author=author)
    for q in read_queries(queries_file) if queries_file else [query]:
        view = service.search(q, filters, page, limit)
        if as_json or queries_file:
            hits = [_hit_json(h, view.papers) for h in view.result.hits]
            print(
                json.dumps(
                    {"query": q, "results": hits, "total": view.result.total}, ensure_ascii=False
                )
            )
            continue
        _print_page(view, page, limit)


def _print_page(view: SearchView, page: int, limit: int) -> None:
    """One page of search results as numbered lines with their TL;DRs and reasons."""
    from bot.adapters.render_text import labelled, paper_line
    from digest.tldr.extractive import tldr_line

    if not view.result.hits and view.result.total:
        raise DigestError(
            f"There is no page {page}: {_matches(view.result.total)} on "
            f"{view.result.pages} page{'' if view.result.pages == 1 else 's'}."
        )
    if view.result.message:
        out.print(view.result.message, markup=False)
    for rank, hit in enumerate(view.result.hits, (page - 1) * limit + 1):
        paper = view.papers[hit.paper_id]
        out.print(f"{rank:>3}. {paper_line(paper)}  [{hit.score:.2f}]", markup=False)
        if tldr := tldr_line(paper):  # as docs/tldr.md shows it on every card
            out.print("\n".join(labelled("TL;DR", tldr, "     ")), markup=False)
        out.print(f"     why: {hit.why}", markup=False)
    if view.result.total:
        out.print(
            f"page {view.result.page}/{view.result.pages} · {_matches(view.result.total)}",
            markup=False,
        )


def _matches(n: int) -> str:
    """'1 match', '7 matches'."""
    return f"{n} match{'' if n == 1 else 'es'}"


@app.command("index")
def index_cmd(db: DbOption = None) -> None:
    """How far the shared work on the papers is: how many are embedded, how many are being embedded."""
    status = wired(db).papers.index_status()
    line = f"papers: {status.papers}"
    if status.semantic:
        line += f"; meaning: {status.semantic}"
    else:
        pct = 100 * status.embedded / status.papers if status.papers else 100
        line += f"; embedded: {status.embedded} of {status.papers} ({pct:.0f}%)"
        if status.embedding_now:
            line += f", {status.embedding_now} being embedded now"
        elif status.embedded < status.papers:
            line += ", waiting for a running bot's embedding worker (or `digestbot ingest`)"
    out.print(line, markup=False)
