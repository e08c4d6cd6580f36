"""Issue 16: the recording proxy started from the Sources pane of the real window: the
official openai SDK pointed at it through a loopback fake upstream, the new trace appears
in the Traces pane, the pane shows listening / calls / the last error, the choice is
remembered in the settings, and stopping it frees the port."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from core.live.source import SourceStatus
from core.store import Store
from tests.servers.fake_upstream import FakeUpstream, Reply
from tests.ui.conftest import open_window, settle
from tests.ui.test_live_gui import _pane, _tool_folders  # noqa: F401 (an autouse fixture)
from ui.main_window import MainWindow
from ui.panes.sources import SourcesPane
from ui.settings import AppSettings

KEY = "sk-gui-proxy-secret-42"


@pytest.fixture
def opened(qtbot: Any, settings: AppSettings, tmp_path: Path) -> Callable[[], MainWindow]:
    """Opens the window on an empty store (after the test has set what it remembers)."""

    def open_() -> MainWindow:
        db = tmp_path / "gui.db"
        Store.open(db).close()
        win: MainWindow = open_window(qtbot, settings, db)
        return win

    return open_


def _proxy(pane: SourcesPane) -> SourceStatus:
    pane.refresh()
    return next(s for s in pane.model.records if s.kind == "proxy")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_proxy(qtbot: Any, pane: SourcesPane, upstream: FakeUpstream) -> int:
    """The proxy switched on in the Sources pane, as a user does: a free listen port and
    the fake upstream's URL typed in, the box ticked; its port once it listens."""
    port = _free_port()
    pane.proxy_listen.setText(f"127.0.0.1:{port}")
    pane.proxy_upstream.setText(upstream.url + "/v1")
    pane.proxy_box.setChecked(True)
    qtbot.waitUntil(lambda: _proxy(pane).state == "listening", timeout=10_000)
    return port


def test_proxy_from_the_sources_pane_records_an_sdk_call_into_the_traces_pane(
    qtbot: Any, settings: AppSettings, tmp_path: Path, opened: Callable[[], MainWindow]
) -> None:
    window = opened()
    pane = _pane(window)
    with FakeUpstream() as upstream:
        upstream.replies.append(Reply("Proxied hello."))
        port = _start_proxy(qtbot, pane, upstream)
        assert not pane.proxy_listen.isEnabled() and not pane.proxy_upstream.isEnabled()
        assert f"http://127.0.0.1:{port}" in pane.proxy_hint.text()
        assert settings.get("proxy/upstream") == upstream.url + "/v1"

        before = {t.id for t in window.traces.model.records}
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY,
                               max_retries=0)  # fmt: skip
        reply = client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hello via the GUI"}]
        )
        assert reply.choices[0].message.content == "Proxied hello."
        qtbot.waitUntil(lambda: len(window.traces.model.records) == len(before) + 1, timeout=10_000)
        (trace,) = [t for t in window.traces.model.records if t.id not in before]
        assert trace.source == "proxy" and "hello via the GUI" in trace.title
        qtbot.waitUntil(lambda: _proxy(pane).calls == 1, timeout=5000)
        assert _proxy(pane).traces_seen == 1 and _proxy(pane).errors == 0
        assert "1 call recorded" in pane.proxy_hint.text()

        pane.proxy_box.setChecked(False)
        assert pane.proxy_listen.isEnabled()
        window.sources.stop_all()
    assert not any(s.kind == "proxy" for s in pane.model.records) or (
        _proxy(pane).state == "stopped"
    )
    with socket.socket() as s:  # the port is free again (as a restarted proxy binds it)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()
    assert KEY.encode() not in (tmp_path / "gui.db").read_bytes()


def test_remembered_proxy_starts_with_the_store_and_a_busy_port_is_shown(
    qtbot: Any, settings: AppSettings, opened: Callable[[], MainWindow]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        settings.set("proxy/on", "true")
        settings.set("proxy/listen", f"127.0.0.1:{taken}")
        settings.set("proxy/upstream", "http://127.0.0.1:9/v1")
        window = opened()
        pane = _pane(window)
        assert pane.proxy_box.isChecked() and pane.proxy_upstream.text() == "http://127.0.0.1:9/v1"
        qtbot.waitUntil(lambda: _proxy(pane).state == "error", timeout=10_000)
        assert str(taken) in _proxy(pane).last_error
        assert "not listening" in pane.proxy_hint.text()
        window.sources.stop_all()


def test_a_bad_upstream_is_refused_in_words(opened: Callable[[], MainWindow]) -> None:
    pane = _pane(opened())
    errors: list[object] = []
    pane.failed.connect(errors.append)
    for upstream, words in (("", "upstream URL"), ("ftp://x", "not an http(s) URL")):
        pane.proxy_upstream.setText(upstream)
        pane.proxy_box.setChecked(True)
        assert not pane.proxy_box.isChecked() and words in str(errors[-1])
    assert not any(s.kind == "proxy" for s in pane.model.records)


def test_a_proxy_trace_has_its_model_s_window_and_no_runtime_budgets(
    qtbot: Any, settings: AppSettings, opened: Callable[[], MainWindow]
) -> None:
    """Review 10: a proxy trace read "0% of the 128,000-token window (config)" beside
    "limits: defaults (the trace recorded none)" — the runtime's default window, called
    configured, and its budgets drawn on another agent's calls. The proxied agent's window
    is its model's (the dated model table, as for an import), with no runtime budgets, and
    the Context and Budget panes say the same."""
    from core.context.window import table_window

    window = opened()
    pane = _pane(window)
    model = "gpt-4o-2024-08-06"
    known = table_window(model)
    assert known is not None and known.tokens is not None
    with FakeUpstream() as upstream:
        upstream.replies.append(Reply("Paris."))
        port = _start_proxy(qtbot, pane, upstream)
        before = {t.id for t in window.traces.model.records}
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY,
                               max_retries=0)  # fmt: skip
        client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "Capital of France?"}]
        )
        qtbot.waitUntil(lambda: len(window.traces.model.records) == len(before) + 1, timeout=10_000)
        (trace,) = [t for t in window.traces.model.records if t.id not in before]
        pane.proxy_box.setChecked(False)
        window.sources.stop_all()
    window.open_trace(trace.id)
    settle(qtbot, window)
    qtbot.waitUntil(lambda: "Computing" not in window.context.summary.text(), timeout=20_000)
    summary = window.context.summary.text()
    assert f"of the {known.tokens:,}-token window (model table)" in summary, summary
    assert "(config)" not in summary and "limits: defaults" not in summary
    qtbot.waitUntil(lambda: "no runtime budgets" in window.budget.status.text(), timeout=20_000)
    budget = window.budget.status.text()
    assert f"window {known.tokens:,} (model table)" in budget, budget
    assert "another tool's trace" in budget and "defaults" not in budget
    drawn = [name for name, _ in window.context.bar.budget.markers()]
    assert drawn == ["window"], drawn  # no soft/hard budget, no runtime threshold
