"""The HTTP door in front of Bolt: malformed but signed requests get 400, not a 500 from deep inside.

Bolt assumes a numeric timestamp header, a body that parses as its content type says, and a
``payload`` that is a JSON object; anything else raised and became a 500. The fields every real
Slack request carries are checked too (bot/adapters/slack/request_fields.py). Badly signed requests
still go to Bolt, which answers 401.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import parse_qsl

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

from bot.adapters.slack.request_fields import action_problem, command_problem, event_problem

log = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def problem(
    headers: Mapping[str, str], body: bytes, verifier: SignatureVerifier | None
) -> str | None:
    """Why a request cannot be handled (None: hand it to Bolt, which also checks the signature)."""
    ts = headers.get("X-Slack-Request-Timestamp")
    if ts is not None and not ts.strip().isdigit():
        return "the timestamp header is not a number"
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return "the body is not UTF-8"
    sig = headers.get("X-Slack-Signature", "")
    # no timestamp at all: unsigned, and is_valid would raise int('') (a 500) rather than say so
    if verifier is not None and (
        ts is None or not verifier.is_valid(body=text, timestamp=ts, signature=sig)
    ):
        return None  # Bolt answers 401 without looking further
    # The same reading as Bolt's parse_body: JSON when so labelled or when it starts with "{".
    ctype = headers.get("Content-Type", "").split(";")[0].strip()
    if ctype == "application/json" or text.startswith("{"):
        doc = _json_object(text)
        return "the body is not a JSON object" if doc is None else event_problem(doc)
    form = dict(parse_qsl(text, keep_blank_values=True))
    if "payload" in form:
        payload = _json_object(form["payload"])
        return "payload is not a JSON object" if payload is None else action_problem(payload)
    return command_problem(form) if "command" in form else None


def bolt_request(request: web.Request, text: str) -> AsyncBoltRequest:
    """The request as Bolt sees it, minus one Bolt misreading.

    Bolt's parse_body treats any form body containing the word "payload" as an interaction, so
    `/papers search payload attacks` arrived empty and got 404; such a command is re-read as
    the plain form it is.
    """
    req = AsyncBoltRequest(body=text, query=request.query_string, headers=request.headers)
    form = dict(parse_qsl(text, keep_blank_values=True))
    if not req.body and "payload" not in form and "command" in form:
        req.body = form
        req.context = build_async_context(AsyncBoltContext({}), form)
    return req


def guard_middleware(app: AsyncApp, signing_secret: str | None, path: str = "/slack/events"):
    """aiohttp middleware in front of Bolt's request handler on ``path``: 400 (logging only size
    and reason) for malformed requests, the rest dispatched to ``app`` as read by bolt_request."""
    verifier = SignatureVerifier(signing_secret) if signing_secret else None

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method != "POST" or request.path != path:
            return await handler(request)
        body = await request.read()  # aiohttp keeps it: Bolt's adapter reads it again
        why = problem(request.headers, body, verifier)
        if why is None:
            response = await app.async_dispatch(bolt_request(request, body.decode("utf-8")))
            return await to_aiohttp_response(response)
        log.info("rejected a Slack request: %s (%d bytes)", why, len(body))
        return web.json_response({"error": why}, status=400)

    return guard
