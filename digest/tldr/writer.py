"""Abstractive TL;DRs written after ingest, off the interactive path, within a time and cost limit.

Only ingest calls the endpoint: a digest, a search or `paper` reads the cached line with the
paper (``Paper.tldr``) or shows the extractive one (digest/tldr/extractive.py), so nothing a person waits
for ever waits on a model. A one-shot `digestbot ingest` writes before it exits (each call bounded
by the timeout, the run by ``per_run``); a running bot hands the work to a thread of its runtime
(bot/runtime/background.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol

from digest.clock import Clock, system_clock
from digest.store import Store
from digest.tldr.extractive import MAX_TLDR_CHARS, restates
from digest.tldr.llm import ChatClient, LlmConfig, LlmError

log = logging.getLogger(__name__)

#: Calls in a row that fail before a run stops: a dead endpoint costs seconds, not hours.
MAX_FAILURES_IN_A_ROW = 2


class AfterIngest(Protocol):
    """What ingest hands new papers to: the writer itself, or a runtime that runs it elsewhere."""

    def after_ingest(self, ids: Iterable[str]) -> int: ...


class TldrWriter:
    """Writes missing or stale TL;DRs for papers through one configured endpoint."""

    def __init__(
        self,
        store: Store,
        config: LlmConfig,
        client: ChatClient | None = None,
        now: Clock = system_clock,
    ) -> None:
        self.store = store
        self.config = config
        self.client = client or ChatClient(config)
        self.now = now

    def after_ingest(self, ids: Iterable[str]) -> int:
        """Write lines for ``ids`` (new or changed papers), then for recent papers lacking one;
        how many were written."""
        return self.write(list(ids))

    def write(self, ids: list[str]) -> int:
        """Ask the endpoint for each paper of ``ids`` (then recent ones) whose line is missing or
        stale, within the run's and the day's budget; how many lines were stored."""
        cfg, repo = self.config, self.store.papers.tldrs
        recent = self.store.papers.recent_ids(cfg.per_run)
        wanted = list(dict.fromkeys([*ids, *recent]))
        todo: list[str] = []
        for start in range(0, len(wanted), 500):  # a 10k-paper ingest reads only what it needs
            if len(todo) >= 2 * cfg.per_run + 20:  # room for papers without an abstract
                break
            todo += repo.stale(wanted[start : start + 500], cfg.model)
        written = failures = calls = 0
        papers = self.store.papers.get_many(todo)
        for paper in (papers[i] for i in todo if i in papers):  # new papers first, then recent
            if calls >= cfg.per_run or failures >= MAX_FAILURES_IN_A_ROW:
                break
            if not paper.abstract.strip():
                continue  # nothing to summarise: the extractive line is empty too
            if not repo.spend(self.now().date(), cfg.per_day):
                log.warning(
                    "TL;DR budget spent: %d calls today (DIGESTBOT_LLM_PER_DAY)", cfg.per_day
                )
                break
            calls += 1
            try:
                line = self.client.tldr(paper, MAX_TLDR_CHARS)
            except LlmError as exc:
                failures += 1
                log.warning("TL;DR for %s not written: %s", paper.id, exc)
                continue
            failures = 0
            if restates(line, paper.title):
                log.info(
                    "TL;DR for %s only restates its title; the extractive line stays", paper.id
                )
                continue
            written += repo.save(paper.id, cfg.model, paper.content_hash, line)
        if failures >= MAX_FAILURES_IN_A_ROW:
            log.warning("TL;DR endpoint failing; the rest waits for the next ingest")
        return written
