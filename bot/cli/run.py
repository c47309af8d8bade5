"""`digestbot run`: the bot itself, with the console, Slack and Discord and the scheduler."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import sys
from typing import TYPE_CHECKING

from bot.cli.channels import DEMO_CHANNEL, DEMO_TOPICS, apply_reply
from bot.cli.main import DbOption, app, out, wired
from bot.cli.options import CONSOLE_USER
from digest.errors import DigestError
from digest.models import ChannelRef, SubscriptionKind

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from aiohttp import web

    from bot.app import App
    from bot.runtime.runner import DigestRunner
    from bot.runtime.scheduler import DigestScheduler

log = logging.getLogger(__name__)
#: Threads for database and ranking work: commands must not queue behind digests and ingest
#: (a tick's claims take one, posting digests' ledger writes at most runner.WRITERS, their
#: grouped confirmations runner.STEP_BATCHES; the database pool holds 40).
WORKER_THREADS = 64


def _first_run(application: App) -> None:
    """The embedded default: bundled papers and, without platform tokens, a demo console channel,
    so `run` shows a digest. Every line says what this process found in the database."""
    s = application.settings
    if application.papers.paper_count() == 0 and not (s.arxiv_queries or s.openreview_venues):
        _load_bundled(application)
    if application.slack is not None or application.discord is not None:
        return  # a real deployment: no console demo channel (docs/commands.md, `run`)
    if not application.channels.lookup.all():
        _create_demo(application)


def _load_bundled(application: App) -> None:
    """The bundled NeurIPS 2026 list; another process starting too may have stored it first."""
    from digest import BUNDLED_PAPERS

    report = application.papers.ingest(str(BUNDLED_PAPERS))
    before = report.parsed - report.added  # stored by another process between our check and now
    if report.added and before:
        print(f"Loaded {report.added} bundled NeurIPS 2026 papers ({before} already stored).")
    elif report.added:
        print(f"Loaded {report.added} bundled NeurIPS 2026 papers.")
    else:
        print(
            f"{before} bundled NeurIPS 2026 papers already stored (by another digestbot process)."
        )


def _create_demo(application: App) -> None:
    """console:lab with the demo topics; says "Created" only when this process added them."""
    ours = [
        topic
        for topic in DEMO_TOPICS
        if application.channels.follows.add(
            DEMO_CHANNEL, SubscriptionKind.TOPIC, topic, "digestbot"
        ).startswith("Now following")
    ]
    if len(ours) == len(DEMO_TOPICS):
        print(f"Created channel {DEMO_CHANNEL} following: {', '.join(DEMO_TOPICS)}.")
    else:  # the database already held some: another process set the channel up at the same time
        print(
            f"Channel {DEMO_CHANNEL} set up by another digestbot process, following: {', '.join(DEMO_TOPICS)}."
        )


async def _serve(application: App) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from bot.adapters.console import repl

    # Database and ranking work runs in threads; the default pool (cores + 4) fills with digests,
    # ingest and index builds, and a command's first query would wait behind them.
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=WORKER_THREADS, thread_name_prefix="digestbot")
    )

    interactive = application.interactive
    # SIGTERM is heard before anything starts: a stop during start-up is clean too. The console
    # leaves Ctrl-C to Python (exit 130); a service stops cleanly on either.
    stop = _stop_on_signals((signal.SIGTERM,) if interactive else (signal.SIGINT, signal.SIGTERM))
    # The ranker loads lazily (a listing from the command line never needs it); a running bot
    # loads (or fits) it before it serves, off the event loop, not on its first search.
    await asyncio.to_thread(application.papers.ranker)
    runner, scheduler = application.runner, application.scheduler
    # Presence (due digests are shared out among live replicas) and, leased, the Discord shards
    # this replica serves: known before Discord connects and before the first tick.
    await application.leases.renew()
    application.leases.start()
    # Answers come from the last complete index; a thread loads it (or fits it) and keeps it
    # fresh, and a niced child process embeds the papers lacking a vector (semantic ranking).
    application.index_refresher.start()
    if application.embedder is not None:
        application.embedder.start()
    discord_task = await _start_platforms(application, interactive)
    await _recover(runner)  # after the logins: a platform's claims resume once it is connected
    scheduler.start(first_tick=False)  # the catch-up below is the first tick
    ops_runner = await _start_ops(application)
    if interactive:
        await _demo_first_digest(application, runner)
    for ref, outcome in (await scheduler.tick()).items():
        log.info("catch-up %s: %s", ref, outcome)
    try:
        if not interactive:
            await stop.wait()  # a service: platforms and scheduler run until SIGTERM
        else:
            print("Type /papers help (or exit). Digests print here when they are due.")
            await _first_of(repl(_console(application)), stop.wait())
    finally:  # EOF, `exit`, or SIGTERM
        await _stop_all(application, scheduler, discord_task, ops_runner)


async def _recover(runner: DigestRunner) -> None:
    """Resume crash leftovers and due retries; a failure here is logged, never fatal (the
    scheduler's sweep tries again every minute)."""
    try:
        await runner.recover()
    except Exception:  # noqa: BLE001 - e.g. the database still starting: start-up goes on
        log.exception("resuming unfinished digests failed; the next sweep tries again")


async def _demo_first_digest(application: App, runner: DigestRunner) -> None:
    """The demo channel's first digest, shown at once (the Quickstart's promise); every other
    channel keeps to its schedule, so a later `run` never uses up a day's digest early."""
    from digest.clock.times import local_day

    demo = application.channels.lookup.get(DEMO_CHANNEL)
    if demo is None or demo.paused or application.channels.history.last(demo.id) is not None:
        return
    await runner.run_channel(demo.id, local_day(application.clock(), demo.timezone))


def _console(application: App) -> Callable[[str], Awaitable[str]]:
    """What answers a line typed at the console prompt."""
    from bot.cli.library import handle_console  # `import PATH` reads the file
    from bot.commands import Context

    async def handle(line: str) -> str:
        me = ChannelRef("console", f"@{CONSOLE_USER}")  # `cmd` on console: acts as the same user
        ctx = Context(
            DEMO_CHANNEL,
            CONSOLE_USER,
            dm=me,
            now=application.clock(),
            name="the console",
            visible=None,
            public=True,
        )
        # off the event loop, as Slack and Discord do: a search must not stall digests being posted
        reply = await asyncio.to_thread(handle_console, application.commands, line, ctx)
        return await apply_reply(application, reply, ctx)

    return handle


async def _stop_all(
    application: App,
    scheduler: DigestScheduler,
    discord_task: asyncio.Task | None,
    ops_runner: web.AppRunner | None,
) -> None:
    """Stop the scheduler, the platforms and the ops endpoints that were started."""
    scheduler.shutdown()
    await application.leases.stop()  # shards given back now: another replica takes them at once
    application.index_refresher.stop()
    if application.embedder is not None:  # the embedding worker process
        application.embedder.close()
    if application.drawer is not None:  # the weekly pictures' worker process
        application.drawer.close()
    if application.slack is not None and "slack" not in application.failed:
        await application.slack.stop()
    if discord_task is not None:
        await application.discord.close()
        discord_task.cancel()
    if ops_runner is not None:
        await ops_runner.cleanup()


async def _start_platforms(application: App, interactive: bool) -> asyncio.Task | None:
    """Log in to each configured platform once; report failures, give up if nothing is left."""
    from bot.cli.startup import report, slack_problem, start_discord

    discord_task, running = None, ["the console"] if interactive else []
    if application.slack is not None:
        if problem := await slack_problem(application):
            application.failed["slack"] = problem
        else:
            await application.slack.start()
            running.append("Slack")
    if application.discord is not None:  # same event loop; setup_hook registers the commands
        started = await start_discord(application)
        if isinstance(started, str):
            application.failed["discord"] = started
        else:
            discord_task, running = started, [*running, "Discord"]
    if application.failed and not running:
        raise DigestError(
            "no platform could start: "
            + "; ".join(
                f"{k.capitalize()} login failed: {v}" for k, v in application.failed.items()
            )
        )
    report(application.failed, running)
    return discord_task


async def _start_ops(application: App) -> web.AppRunner | None:
    """/healthz and /metrics on the configured local port (DIGESTBOT_HEALTH_PORT=0: off)."""
    from aiohttp import web

    from bot.runtime.ops import ops_app

    s = application.settings
    if not s.health_port:
        return None
    runner = web.AppRunner(ops_app(application.health(), application.metrics))
    await runner.setup()
    try:
        await web.TCPSite(runner, s.health_host, s.health_port).start()
    except OSError as exc:
        log.warning("health endpoint not started on %s:%s: %s", s.health_host, s.health_port, exc)
        await runner.cleanup()
        return None
    return runner


def _stop_on_signals(signals: tuple[signal.Signals, ...]) -> asyncio.Event:
    """An event set by any of ``signals`` (installed on the running loop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    return stop


async def _first_of(*work: Awaitable[object]) -> None:
    """Run until the first of ``work`` ends (its error, if any, is raised); cancel the others."""
    tasks = [asyncio.ensure_future(w) for w in work]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()
    finally:
        for task in tasks:
            task.cancel()


def _no_input() -> bool:
    """stdin is /dev/null (a service) or absent: nobody can type at the console.

    A pipe, a file or an in-process stream still drives the console (scripts feed it that way)."""
    if sys.stdin is None:
        return True
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError):  # a stream without a descriptor: someone supplies the lines
        return False
    return stat.S_ISCHR(mode) and not sys.stdin.isatty()


@app.command("run")
def run_cmd(db: DbOption = None) -> None:
    """Run the bot: scheduler plus every configured platform (the console when no tokens are set)."""
    # strict_model: the bot logs a missing model and ranks lexically; console: see App.interactive
    application = wired(db, strict_model=False, out=out.file, console=None)
    if (application.slack or application.discord) is None and _no_input():
        # e.g. a service with its tokens missing: exiting 0 would tell systemd all is well
        raise DigestError(
            "nothing to run: no Slack or Discord token is set (DIGESTBOT_SLACK_BOT_TOKEN, "
            "DIGESTBOT_DISCORD_TOKEN) and stdin is not a terminal for the console"
        )
    _first_run(application)
    asyncio.run(_serve(application))
