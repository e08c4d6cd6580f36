"""A loopback HTTP server that answers each request with scripted raw bytes (pieces sent
apart, so framing lands split across reads), for the proxy's own upstream client."""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass, field


@dataclass
class Script:
    pieces: list[bytes]
    close: bool = False
    """Close the connection after the reply (a close-delimited body)."""
    hold_s: float = 0.0
    """After the pieces, send nothing more for up to this long (a model thinking), and
    note when the other end drops the line (``ScriptedHttp.dropped``)."""


@dataclass
class ScriptedHttp:
    replies: deque[Script] = field(default_factory=deque)
    targets: list[str] = field(default_factory=list)
    connections: int = 0
    dropped: list[float] = field(default_factory=list)
    """``time.monotonic()`` of each held reply whose line the other end dropped."""
    port: int = 0
    tls: ssl.SSLContext | None = None
    """Serve HTTPS with this context."""

    def __enter__(self) -> ScriptedHttp:
        self._srv = socket.create_server(("127.0.0.1", 0))
        self.port = self._srv.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._srv.close()

    @property
    def url(self) -> str:
        return f"https://localhost:{self.port}" if self.tls else f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._srv.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is not None:
            conn = self.tls.wrap_socket(conn, server_side=True)
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = _length(head)
                while len(buf) < length:
                    buf += conn.recv(65536)
                buf = buf[length:]
                self.targets.append(head.split(b" ")[1].decode())
                script = self.replies.popleft()
                for piece in script.pieces:
                    conn.sendall(piece)
                    time.sleep(0.01)
                if script.hold_s:
                    conn.settimeout(script.hold_s)
                    try:
                        data = conn.recv(65536)
                    except TimeoutError:
                        return  # still held when the script ended
                    except OSError:  # reset: dropped too
                        data = b""
                    if not data:
                        self.dropped.append(time.monotonic())
                    return
                if script.close:
                    return


def _length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0
