"""``ctxlens proxy`` as a child process, the way a user starts it, with its JSON lines read
on a thread (``events``) and its stderr kept (``stderr``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


class ProxyProcess:
    def __init__(self, db: Path, upstream: str, *extra: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "app",
                "--db",
                str(db),
                "proxy",
                "--upstream",
                upstream,
                "--listen",
                "127.0.0.1:0",
                "--json",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.events: list[dict[str, Any]] = []
        self.stdout: list[str] = []
        self.stderr = ""
        self._cond = threading.Condition()
        self._eof = False
        threading.Thread(target=self._read, daemon=True).start()
        listening = self.wait_for(lambda e: e["event"] == "listening")
        self.listening = listening
        self.url = "http://" + listening["address"]

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cond:
                self.stdout.append(line)
                self.events.append(json.loads(line))
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def wait_for(self, pred: Any, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = next((e for e in self.events if pred(e)), None)
                if found is not None:
                    return found
                if time.monotonic() > deadline or self._eof:
                    raise AssertionError(f"no such event; got {self.events}, {self._errors()}")
                self._cond.wait(0.5)

    def calls(self, n: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        """The first ``n`` call events, once they have all arrived."""
        self.wait_for(lambda e: sum(x["event"] == "call" for x in self.events) >= n, timeout)
        return [e for e in self.events if e["event"] == "call"][:n]

    def _errors(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            code = self.proc.wait(20)
        finally:
            assert self.proc.stderr is not None
            self.stderr = self.proc.stderr.read()
        return code

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(20)
