"""A client for any OpenAI-compatible chat-completions endpoint (a hosted API, a local llama.cpp
or Ollama server), used only to write abstractive TL;DRs in the background (docs/tldr.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import httpx

from digest.errors import DigestError
from digest.models import Paper
from digest.text.headline import shorten
from digest.text.latex import clean_text
from digest.text.passwords import hide_password

SYSTEM_PROMPT = (
    "You write TL;DR lines for research papers: one plain sentence of at most 30 words saying "
    "what the paper did and what it found. No preamble, no title, no Markdown, no quotes."
)
#: Prefixes models like to put before the answer, dropped from it.
_PREAMBLE = re.compile(
    r"^\s*(?:\**\s*(?:tl;?\s?dr|summary|one[- ]sentence summary)\s*\**\s*[:\-–]\s*)", re.I
)


class LlmError(DigestError):
    """The endpoint refused, failed, timed out or answered with no usable line."""


@dataclass(frozen=True)
class LlmConfig:
    """Where the endpoint is and how much may be spent on it; the key never prints (repr=False)."""

    url: str
    model: str
    key: str | None = field(default=None, repr=False)
    timeout: float = 20.0  # seconds for one call, connecting included
    per_run: int = 50  # calls one ingest may make
    per_day: int = 500  # calls all processes sharing the database may make in a UTC day
    max_input_chars: int = 6000  # the abstract is cut to this before it is sent
    max_tokens: int = 120

    @property
    def endpoint(self) -> str:
        """The chat-completions URL: ``url`` itself if it names it, else ``url`` + that path."""
        base = self.url.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


def _scrub(text: str, key: str | None) -> str:
    """``text`` safe to log: the key (if an error echoes it) and URL passwords replaced."""
    text = hide_password(text)
    return text.replace(key, "***") if key else text


def answer_line(text: str, limit: int) -> str:
    """The model's answer as one clean line: preamble, Markdown, quotes and LaTeX dropped."""
    first = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    first = _PREAMBLE.sub("", first)
    first = re.sub(r"[*_`#]+", "", first).strip().strip("\"'“”‘’").strip()
    return shorten(clean_text(first), limit)


class ChatClient:
    """Asks the endpoint for one paper's TL;DR; every failure is one LlmError line, key scrubbed."""

    def __init__(self, config: LlmConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        headers = {"Authorization": f"Bearer {config.key}"} if config.key else {}
        self._client = httpx.Client(
            timeout=httpx.Timeout(config.timeout), headers=headers, transport=transport
        )

    def messages(self, paper: Paper) -> list[dict[str, str]]:
        """The chat messages for ``paper``: instructions, then its title and (cut) abstract."""
        abstract = shorten(paper.abstract, self.config.max_input_chars)
        title = "" if paper.title_derived else f"Title: {paper.title}\n\n"
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{title}Abstract: {abstract}"},
        ]

    def tldr(self, paper: Paper, limit: int) -> str:
        """One line for ``paper`` of at most ``limit`` characters, or an LlmError."""
        cfg = self.config
        payload = {
            "model": cfg.model,
            "messages": self.messages(paper),
            "temperature": 0,
            "max_tokens": cfg.max_tokens,
        }
        try:
            resp = self._client.post(cfg.endpoint, json=payload)
        except httpx.TimeoutException:
            raise LlmError(f"no answer within {cfg.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise LlmError(_scrub(f"{type(exc).__name__}: {exc}", cfg.key)[:200]) from None
        if resp.status_code != 200:
            raise LlmError(_scrub(f"HTTP {resp.status_code}: {_error_text(resp)}", cfg.key))
        try:
            content = resp.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LlmError("the answer is not a chat completion") from None
        line = answer_line(content if isinstance(content, str) else "", limit)
        if not line:
            raise LlmError("the answer was empty")
        return line

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()


def _error_text(resp: httpx.Response) -> str:
    """The endpoint's own error message (OpenAI's ``{"error": {"message": …}}``), short."""
    try:
        err = resp.json().get("error")
        text = err.get("message") if isinstance(err, dict) else str(err or "")
    except (ValueError, AttributeError):
        text = resp.text
    return " ".join(str(text).split())[:160] or resp.reason_phrase
