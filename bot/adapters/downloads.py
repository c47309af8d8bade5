"""Reading a downloaded file with a cap: a platform's stated size is never trusted alone."""

from __future__ import annotations

import aiohttp


async def read_capped(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    """At most ``limit`` + 1 bytes of the body, streamed (more than ``limit`` means too big)."""
    data = bytearray()
    # StreamReader.read(n) returns what has arrived, up to n: loop until the cap or the end
    while len(data) <= limit:
        chunk = await resp.content.read(limit + 1 - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)
