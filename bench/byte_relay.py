"""A bare TCP byte relay on loopback: the floor of one more hop on this machine, the
control ``bench/bench_proxy.py`` measures beside the proxy (no HTTP parsing, no
recording: what any proxy costs before doing anything).

    python -m bench.byte_relay UPSTREAM_HOST UPSTREAM_PORT   # prints its port, then relays
"""

from __future__ import annotations

import asyncio
import sys


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(1 << 16):
            dst.write(data)
            await dst.drain()
    except ConnectionError:
        pass
    finally:
        dst.close()


async def _main(host: str, port: int) -> None:
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(host, port)
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1], int(sys.argv[2])))
