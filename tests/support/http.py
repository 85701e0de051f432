"""One HTTP client for the tests' many small requests.

``httpx.request`` builds a client for each call, about 50 ms here (most of it its TLS
context), where a request on a kept client takes 2-3 ms: 451 submissions in the
browser's deep-queue test took 24 s one way and 1 s the other.
"""

from __future__ import annotations

import atexit
import functools

import httpx


@functools.cache
def http() -> httpx.Client:
    """The process's shared client (10 s timeout), closed at exit."""
    client = httpx.Client(timeout=10)
    atexit.register(client.close)
    return client
