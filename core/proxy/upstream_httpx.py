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
        try:
            async for data in self.resp.aiter_raw():
                sink([data])
                await self._flowing.wait()
                if self._stopped is not None:
                    raise self._stopped
        except httpx.TimeoutException:
            raise UpstreamTimeout() from None
        except httpx.HTTPError as exc:
            raise UpstreamCut(repr(exc)) from None

    def pause(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    def stop_body(self, exc: Exception) -> None:
        self._stopped = exc
        self._flowing.set()

    async def close(self) -> None:
        await self.resp.aclose()


def _decoded(raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]
