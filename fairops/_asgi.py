"""The ASGI steps fairops' request middlewares share: a header, the whole body, the body handed on, a JSON answer.

>>> import asyncio
>>> parts = [{"type": "http.request", "body": b"ab", "more_body": True},
...          {"type": "http.request", "body": b"c", "more_body": False}]
>>> async def receive(): return parts.pop(0)
>>> asyncio.run(read_body(receive))
b'abc'
>>> header({"headers": [(b"Content-Type", b"text/csv")]}, b"content-type")
b'text/csv'
"""

from __future__ import annotations

import json


class BodyTooLarge(Exception):
    """A request body went past the bytes :func:`read_body` was allowed to read."""


def header(scope, name: bytes) -> bytes:
    """The value of header ``name`` (lower case), or empty."""
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value
    return b""


async def read_body(receive, max_bytes: int | None = None) -> bytes | None:
    """The whole body of a request, None when the client left first; :class:`BodyTooLarge` past ``max_bytes``
    (reading stops there)."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        if max_bytes is not None and len(body) > max_bytes:
            raise BodyTooLarge(max_bytes)
        if not message.get("more_body", False):
            return bytes(body)


def replay(body: bytes, receive):
    """A ``receive`` that hands the app ``body`` (already read), then whatever the client sends next."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed():
        return pending.pop() if pending else await receive()

    return replayed


async def answer_json(send, status: int, document: dict) -> None:
    """Answer ``document`` as JSON with ``status``."""
    content = json.dumps(document).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(content)).encode())]})
    await send({"type": "http.response.body", "body": content})
