"""The upstream through httpx, for an upstream reached through an environment proxy
(``HTTPS_PROXY``, ``ALL_PROXY``…): the same ``Exchange`` as a direct connection
(``core/proxy/upstream.py``), at httpx's cost per piece."""

from __future__ import annotations

import asyncio
import urllib.request

import httpx

from core.proxy.upstream import Head, Sink, UpstreamCut, UpstreamTimeout, UpstreamUnreachable


def env_proxied(url: httpx.URL) -> bool:
    """Whether the environment names a proxy for ``url`` (``HTTPS_PROXY``, ``ALL_PROXY``…,
    not bypassed by ``NO_PROXY``): the variables httpx reads too."""
    proxies = urllib.request.getproxies()
    if not (proxies.get(url.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(url.host)


class HttpxExchange:
    def __init__(self, client: httpx.AsyncClient, resp: httpx.Response) -> None:
        self.client, self.resp = client, resp
        self.head = Head(resp.status_code, resp.reason_phrase, _decoded(resp.headers.raw))
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._stopped: Exception | None = None
        self._waiting: asyncio.Task[object] | None = None
        """The task waiting for the next piece, while it waits (``stop_body`` wakes it)."""

    @classmethod
    async def open(
        cls,
        client: httpx.AsyncClient,
        method: str,
        url: httpx.URL,
        headers: list[tuple[str, str]],
        body: bytes,
    ) -> HttpxExchange:
        request = client.build_request(method, url, headers=headers, content=body)
        try:
            return cls(client, await client.send(request, stream=True))
        except httpx.TimeoutException:
            raise UpstreamTimeout() from None
        except httpx.HTTPError as exc:
            raise UpstreamUnreachable(repr(exc)) from None

    async def body(self, sink: Sink) -> None:
        pieces = self.resp.aiter_raw()
        task = asyncio.current_task()
        try:
            while self._stopped is None:
                self._waiting = task
                try:
                    data = await anext(pieces)
                except StopAsyncIteration:
                    return
                finally:
                    self._waiting = None
                sink([data])
                await self._flowing.wait()
        except asyncio.CancelledError:
            if self._stopped is None or task is None:
                raise  # the proxy stops
            task.uncancel()  # the cancel was stop_body's: the body ends with its reason
        except httpx.TimeoutException:
            raise UpstreamTimeout() from None
        except httpx.HTTPError as exc:
            raise UpstreamCut(repr(exc)) from None
        raise self._stopped

    def pause(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    def stop_body(self, exc: Exception) -> None:
        """End the body with ``exc`` now, also while the upstream sends nothing (an agent
        that went while the model was silent is not waited on until the timeout)."""
        self._stopped = exc
        self._flowing.set()
        if self._waiting is not None and self._waiting is not asyncio.current_task():
            self._waiting.cancel()

    async def close(self) -> None:
        await self.resp.aclose()


def _decoded(raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]
