"""Limits on a scoring request, checked before the server parses it.

MLflow's scoring server reads ``POST /invocations`` whole and hands JSON to ``json.loads``, which recurses
once per level of nesting: a 2 KB body of arrays about 1,000 deep raises ``RecursionError`` there, before any
model code runs, and the server answers 500. :class:`RequestGuard` is an ASGI middleware that reads the
body first and answers a body larger than ``max_bytes`` with 413, JSON nested deeper than ``max_depth``
with 400, and a body MLflow would read into the wrong rows (:mod:`fairops.jobs._request_shapes`) with 400
(one line, in MLflow's error format); anything else reaches the wrapped app unchanged.

>>> json_depth(b'{"dataframe_split": {"columns": ["a"], "data": [[1], [2]]}}')
4
>>> json_depth(b'{"text": "[[[[ not nesting ]]]]", "quote": "\\\\"[", "n": [1]}')
2
"""

from __future__ import annotations

import re

import numpy as np

from .._asgi import BodyTooLarge, answer_json, header, read_body, replay
from ..errors import InputError
from ._request_shapes import shape_problem

DEFAULT_MAX_DEPTH = 32
DEFAULT_MAX_BYTES = 64 * 2**20
GUARDED_PATHS = ("/invocations",)

# A JSON string, escapes included; brackets inside strings are text, not nesting.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_A_BRACKET = bytes(sorted(set(range(256)) - set(b"[]{}")))
_CHUNK = 1 << 20


def json_depth(body: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (0 for a bare value), without parsing it.

    Linear in the body's length and never recursive, so it is safe on any input. On invalid JSON the
    figure is a bound rather than exact, which is all a limit needs.
    """
    brackets = _STRING.sub(b"", body).translate(None, _NOT_A_BRACKET)
    steps = np.frombuffer(brackets, dtype=np.uint8)
    depth = deepest = 0
    for start in range(0, len(steps), _CHUNK):
        chunk = steps[start:start + _CHUNK]
        running = depth + np.cumsum(np.where((chunk == ord("[")) | (chunk == ord("{")), 1, -1))
        deepest, depth = max(deepest, int(running.max())), int(running[-1])
    return deepest


class RequestGuard:
    """ASGI middleware: size and nesting limits on the bodies of ``paths`` before ``app`` sees them.

    >>> import asyncio
    >>> async def echo(scope, receive, send):
    ...     body = (await receive())["body"]
    ...     await send({"type": "http.response.start", "status": 200, "headers": []})
    ...     await send({"type": "http.response.body", "body": body})
    >>> def post(app, body):
    ...     sent, parts = [], [{"type": "http.request", "body": body, "more_body": False}]
    ...     async def receive(): return parts.pop(0)
    ...     async def send(message): sent.append(message)
    ...     scope = {"type": "http", "method": "POST", "path": "/invocations",
    ...              "headers": [(b"content-type", b"application/json")]}
    ...     asyncio.run(app(scope, receive, send))
    ...     return sent[0]["status"], sent[1]["body"]
    >>> post(RequestGuard(echo, max_depth=2), b'{"inputs": [1, 2]}')
    (200, b'{"inputs": [1, 2]}')
    >>> post(RequestGuard(echo, max_depth=2), b'{"inputs": [[1, 2]]}')[0]
    400
    """

    def __init__(self, app, *, max_depth: int = DEFAULT_MAX_DEPTH, max_bytes: int = DEFAULT_MAX_BYTES,
                 paths=GUARDED_PATHS):
        for name, value in (("max_depth", max_depth), ("max_bytes", max_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")
        self.app, self.max_depth, self.max_bytes, self.paths = app, max_depth, max_bytes, tuple(paths)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            return await self.app(scope, receive, send)
        declared = header(scope, b"content-length").strip()
        if declared.isdigit() and int(declared) > self.max_bytes:
            return await _refuse(send, 413, f"request body of {int(declared)} bytes is over the limit of "
                                            f"{self.max_bytes} bytes")
        try:
            body = await read_body(receive, self.max_bytes)
        except BodyTooLarge:
            return await _refuse(send, 413, f"request body is over the limit of {self.max_bytes} bytes")
        if body is None:
            return None
        content_type = header(scope, b"content-type").lower()
        if b"json" in content_type:
            depth = json_depth(body)
            if depth > self.max_depth:
                return await _refuse(send, 400, f"JSON nested {depth} levels deep; the limit is {self.max_depth}")
        problem = shape_problem(content_type.decode("latin-1"), body)
        if problem is not None:
            return await _refuse(send, 400, problem)
        return await self.app(scope, replay(body, receive), send)


async def _refuse(send, status: int, message: str):
    code = "BAD_REQUEST" if status == 400 else "REQUEST_LIMIT_EXCEEDED"
    await answer_json(send, status, {"error_code": code, "message": message})
