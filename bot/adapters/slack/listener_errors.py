"""Every listener answers its own failures: acked, an ephemeral line for the user, never a raise.

A listener that raises after ``ack()`` makes Bolt answer 404 once its 3-second wait runs out and
leaves the user with nothing; a bad button value or an unknown paper id is a user's problem to
be told about, not a crash.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable

from slack_bolt.kwargs_injection.async_args import AsyncArgs
from slack_sdk.errors import SlackApiError

from bot.adapters.slack.bolt_middleware import CLAIM
from digest.errors import DigestError

log = logging.getLogger(__name__)
FAILED = "Something went wrong on our side; nothing was changed. Please try again later."
Listener = Callable[..., Awaitable[None]]
#: chat.postEphemeral answers meaning the user cannot see it there (a DM can still reach them).
NOT_SHOWN = {"user_not_in_channel", "channel_not_found", "not_in_channel", "is_archived"}


class Repeated(Exception):
    """Another process (or this one, earlier) already handled this request: stop quietly."""


def _after_ack(args: AsyncArgs) -> Callable[..., Awaitable[None]]:
    """``args.ack`` that, once the ack is sent, waits for the request's de-duplication claim
    (started by gate.dedup_middleware) and stops the listener if the request was handled."""
    claim = (args.context or {}).get(CLAIM)

    async def ack(*a, **kw) -> None:
        await args.ack(*a, **kw)
        await _claimed(claim)

    return ack


async def _claimed(claim: Awaitable[bool] | None) -> None:
    if claim is not None and not await claim:
        raise Repeated


def guarded(func: Listener) -> Callable[[AsyncArgs], Awaitable[None]]:
    """``func`` as a Bolt listener that acks, catches every error and tells the user briefly.

    A request is de-duplicated after its ack, never before (bolt_middleware.py): a listener that acks
    itself waits for the claim inside its ``ack()``; one Bolt acked already (events) waits first.
    """
    names = inspect.getfullargspec(func).args

    async def listener(args: AsyncArgs) -> None:
        try:
            given = {n: getattr(args, n) for n in names}
            if "ack" in given:
                given["ack"] = _after_ack(args)
            else:
                await _claimed((args.context or {}).get(CLAIM))
            await func(**given)
        except Repeated:
            log.info("a repeated Slack request was dropped after its ack")
        except DigestError as exc:
            await answer(args, str(exc))
        except Exception as exc:  # noqa: BLE001 - a listener must never raise (see module doc)
            # Where, not what: the body carries what the user typed.
            log.error("Slack listener %s failed: %s", func.__name__, type(exc).__name__)
            await answer(args, FAILED)

    listener.__name__ = func.__name__
    return listener


async def answer(args: AsyncArgs, text: str) -> None:
    """Ack if not yet done, then tell the user ``text`` where only they can see it."""
    if args.ack.response is None:
        await args.ack()
    body = args.body or {}
    user = (body.get("user") or {}).get("id") or body.get("user_id")
    user = user or (body.get("event") or {}).get("user")  # a DM command: only the event names it
    channel = (body.get("channel") or {}).get("id") or body.get("channel_id")
    try:
        if body.get("response_url"):
            await args.respond(text=text, response_type="ephemeral", replace_original=False)
        elif user and channel:
            await ephemeral(args.client, channel, user, text)
        elif user and body.get("type") == "block_actions":  # Home tab: the app's DM with the user
            await args.client.chat_postMessage(channel=user, text=text)
        elif (event := body.get("event") or {}).get("channel_type") == "im":  # a DM command
            await args.client.chat_postMessage(channel=event["channel"], text=text)
    except (SlackApiError, OSError) as exc:
        code = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
        log.warning("could not tell user %s about a failure: %s", user, code)


async def ephemeral(client, channel: str, user: str, text: str) -> None:  # noqa: ANN001 - a Slack client
    """``text`` for ``user`` only; Slack refuses it when they are not in the channel: a DM then."""
    try:
        await client.chat_postEphemeral(channel=channel, user=user, text=text)
    except SlackApiError as exc:
        code = exc.response.get("error")
        if code not in NOT_SHOWN:
            raise
        log.info("ephemeral reply refused in %s (%s); sent to the user's DM instead", channel, code)
        await client.chat_postMessage(channel=user, text=text)  # a user id: the app's DM
