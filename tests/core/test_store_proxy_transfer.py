"""Issue 16: the proxy's request records (``proxy_requests``: the body byte for byte) travel
with a trace through the lossless export and ``ctxlens copy``, SQLite ↔ PostgreSQL, and no
credential reaches an export or a store on the way."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from core.errors import InvalidInputError
from core.exporters.ctxlens_json import export_text
from core.importers.ctxlens_json import import_data
from core.proxy.server import ProxyServer
from core.store import Store
from core.transfer import copy_traces
from tests.servers.fake_upstream import FakeUpstream, Reply

KEY = "sk-transfer-secret-0123456789"


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[Store, str]]:
    """A SQLite store holding one trace recorded through the real proxy (two calls, the
    second streamed) by the official openai SDK."""
    source = Store.open(tmp_path / "proxied.db")
    with FakeUpstream() as up, ProxyServer(source, up.url, port=0) as proxy:
        up.replies.extend([Reply("Hello there."), Reply("Fine, thanks.")])
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key=KEY, max_retries=0)
        history: list[Any] = [{"role": "user", "content": "Hi ünïcode ✓"}]
        first = client.chat.completions.create(model="gpt-test", messages=history)
        history += [{"role": "assistant", "content": first.choices[0].message.content},
                    {"role": "user", "content": "How are you?"}]  # fmt: skip
        for _ in client.chat.completions.create(model="gpt-test", messages=history, stream=True):
            pass
    with source.read() as r:
        (trace,) = r.traces()
    yield source, trace.id
    source.close()


def _requests(store: Store, trace_id: str) -> list[dict[str, Any]]:
    with store.read() as r:
        return [{k: v for k, v in row.items() if k != "id"}
                for row in r.table_rows("proxy_requests", trace_id)]  # fmt: skip


def test_export_carries_the_request_bodies_and_imports_them_byte_for_byte(
    proxied: tuple[Store, str], store: Store
) -> None:
    source, trace_id = proxied
    rows = _requests(source, trace_id)
    assert len(rows) == 2 and all(isinstance(r["body"], bytes) for r in rows)
    text = export_text(source, trace_id)
    assert KEY not in text and "authorization" not in text.lower()
    exported = json.loads(text)["proxy_requests"]
    assert [r["body_sha256"] for r in exported] == [r["body_sha256"] for r in rows]
    import_data(store, json.loads(text), "export.json")
    assert _requests(store, trace_id) == rows
    assert export_text(store, trace_id) == text, "export → import → export is identical"


def test_copy_carries_them_both_ways(
    proxied: tuple[Store, str], store: Store, tmp_path: Path
) -> None:
    source, trace_id = proxied
    rows = _requests(source, trace_id)
    (there,) = copy_traces(source, store)
    assert there.status == "copied" and _requests(store, trace_id) == rows
    with Store.open(tmp_path / "back.db") as back:
        (home,) = copy_traces(store, back)
        assert home.status == "copied" and _requests(back, trace_id) == rows
    assert copy_traces(source, store)[0].status == "skipped", "same export digest"


def test_an_imported_credential_header_is_dropped_and_bad_base64_named(
    proxied: tuple[Store, str], store: Store
) -> None:
    source, trace_id = proxied
    data = json.loads(export_text(source, trace_id))
    data["proxy_requests"][0]["headers"]["Authorization"] = f"Bearer {KEY}"
    data["proxy_requests"][0]["headers"]["x-api-key"] = KEY
    bad = json.loads(json.dumps(data))
    bad["proxy_requests"][1]["body"] = "not base64!"
    with pytest.raises(InvalidInputError, match=r"proxy_requests\[1\].*'body'"):
        import_data(store, bad, "crafted.json")
    import_data(store, data, "crafted.json")
    assert KEY not in json.dumps([r["headers"] for r in _requests(store, trace_id)])
