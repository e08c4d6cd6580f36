"""Image blocks in OpenAI-style and OpenHands V1 content become refs through one reader
(``core/importers/content.py:content_with_images``); the other blocks stay as written."""

from __future__ import annotations

import json
from pathlib import Path

from core.importers.api import import_paths
from core.records import Message
from core.store import Store

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _messages(store: Store, trace_id: str) -> list[Message]:
    with store.read() as r:
        return list(r.all_messages(trace_id))


def test_openai_image_blocks_of_every_shape_become_refs(store: Store, tmp_path: Path) -> None:
    text = {"type": "text", "text": "What is in these?"}
    content = [
        text,
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "input_image", "image_url": "https://example.com/a.png"},
        {"type": "image", "source": {"data": PNG}},
    ]
    path = tmp_path / "chat.jsonl"
    rows = [{"role": "user", "content": content}, {"role": "assistant", "content": "A dot."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (res,) = import_paths(store, [path])
    user, reply = _messages(store, res.trace_id)
    with store.read() as r:
        refs = {ref.id: ref for ref in r.refs(res.trace_id)}
    assert user.content == "What is in these?" and reply.parts is None
    assert user.parts is not None and user.parts[0] == text
    images = user.parts[1:]
    assert [p["type"] for p in images] == ["image", "image", "image"]
    assert [refs[p["ref"]].content for p in images] == [
        f"data:image/png;base64,{PNG}",
        "https://example.com/a.png",
        f"data:image/png;base64,{PNG}",
    ]
    assert all(refs[p["ref"]].source_sequence == user.sequence for p in images)


def test_openai_text_blocks_alone_keep_no_parts(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    row = {
        "role": "user",
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
    }
    path.write_text(json.dumps(row) + "\n")
    (res,) = import_paths(store, [path])
    (user,) = _messages(store, res.trace_id)
    assert (user.content, user.parts) == ("a\nb", None)


def test_openhands_message_images_become_refs(store: Store, tmp_path: Path) -> None:
    urls = ["https://example.com/shot1.png", f"data:image/png;base64,{PNG}"]
    content = [{"type": "text", "text": "Two shots"}, {"type": "image", "image_urls": urls}]
    events = [
        {
            "id": "e0",
            "kind": "SystemPromptEvent",
            "source": "agent",
            "system_prompt": {"type": "text", "text": "You are OpenHands."},
            "tools": [],
        },
        {
            "id": "e1",
            "kind": "MessageEvent",
            "source": "user",
            "llm_message": {"role": "user", "content": content},
        },
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    (res,) = import_paths(store, [path], fmt="openhands")
    (user,) = [m for m in _messages(store, res.trace_id) if m.role == "user"]
    with store.read() as r:
        refs = {ref.id: ref for ref in r.refs(res.trace_id)}
    assert user.content == "Two shots"
    assert user.parts is not None and user.parts[0] == content[0]
    assert [refs[p["ref"]].content for p in user.parts[1:]] == urls
    assert all(refs[p["ref"]].source_sequence == user.sequence for p in user.parts[1:])


def test_openhands_observation_images_belong_to_the_tool_result(
    store: Store, tmp_path: Path
) -> None:
    """A V1 observation's screenshot (a browser tool's, say) is a ref of the tool result
    that carried it, and the result keeps its blocks, so the ref is reachable from it."""
    url = f"data:image/png;base64,{PNG}"
    observation = {
        "kind": "BrowserObservation",
        "content": [
            {"type": "text", "text": "Page loaded"},
            {"type": "image", "image_urls": [url]},
        ],
    }
    events = [
        {"id": "e0", "kind": "SystemPromptEvent", "source": "agent",
         "system_prompt": {"type": "text", "text": "You are OpenHands."}, "tools": []},
        {"id": "e1", "kind": "ActionEvent", "source": "agent", "thought": [],
         "tool_name": "browser", "tool_call_id": "c1", "llm_response_id": "r1",
         "tool_call": {"id": "c1", "name": "browser", "arguments": "{}"},
         "action": {"kind": "BrowserAction"}},
        {"id": "e2", "kind": "ObservationEvent", "source": "environment", "tool_name": "browser",
         "tool_call_id": "c1", "action_id": "e1", "observation": observation},
    ]  # fmt: skip
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    (res,) = import_paths(store, [path], fmt="openhands")
    (result,) = [m for m in _messages(store, res.trace_id) if m.role == "tool"]
    with store.read() as r:
        refs = {ref.id: ref for ref in r.refs(res.trace_id)}
    assert result.content == "Page loaded" and result.tool_call_id == "c1"
    assert result.parts is not None and result.parts[0] == observation["content"][0]
    (image,) = result.parts[1:]
    assert refs[image["ref"]].content == url
    assert refs[image["ref"]].source_sequence == result.sequence
