"""Tool-output slimming (SPEC REF-2, seed C "工具结果应该先瘦身，再进入上下文").

An output over the size limit never enters the context whole. Its full text becomes a
``tool_output`` ref (content kept in the ``refs`` table) and the context gets a slim JSON::

    {"summary": …, "refs": [{"ref": "out-…", …}], "coverage": {…}, "unresolved": […]}

— the conclusion, stable references, what the data covers and what is still open. A tool
can register its own slimmer (it knows which fields matter and can cut finer refs, e.g.
one per evidence window); every other tool gets the generic one, which describes the
structure of JSON or the head and tail of text. Images in an output always become refs
(TOK-3): the context shows their reference text, ``read_ref`` loads one on demand.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.json_text import loads_or
from core.records import ContextRef
from core.refs.ids import content_key, make_ref_id
from core.tokens import count_text

JSON = Any


@dataclass(frozen=True, slots=True)
class ImageData:
    """An image produced by a tool: a ``data:`` URL (or a remote URL) and what it shows."""

    url: str
    description: str = ""

    @staticmethod
    def from_bytes(data: bytes, mime: str = "image/png", description: str = "") -> ImageData:
        encoded = base64.b64encode(data).decode("ascii")
        return ImageData(f"data:{mime};base64,{encoded}", description)

    @property
    def size_bytes(self) -> int:
        if self.url.startswith("data:") and "," in self.url:
            payload = self.url.split(",", 1)[1]
            return len(payload) * 3 // 4 - payload.count("=")
        return len(self.url.encode())


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """One tool execution's raw result."""

    tool: str
    text: str
    arguments: str = "{}"
    images: tuple[ImageData, ...] = ()


@dataclass(frozen=True, slots=True)
class SlimPolicy:
    """When an output is slimmed, and how much of it the generic slimmer previews."""

    max_tokens: int = 1_000
    max_bytes: int = 16_384
    preview_chars: int = 600
    max_fields: int = 30


@dataclass
class SlimView:
    """The four parts the context receives instead of the raw output."""

    summary: JSON
    refs: list[dict[str, Any]] = field(default_factory=list)
    coverage: dict[str, Any] = field(default_factory=dict)
    unresolved: list[str] = field(default_factory=list)

    def to_text(self) -> str:
        data = {
            "summary": self.summary,
            "refs": self.refs,
            "coverage": self.coverage,
            "unresolved": self.unresolved,
        }
        return json.dumps(data, ensure_ascii=False, separators=(", ", ": "))


class RefMaker:
    """Creates refs for one output (the full output, images, slimmer-specific pieces)."""

    def __init__(self, trace_id: str, tool: str, scope: str | None = None) -> None:
        self.trace_id = trace_id
        self.tool = tool
        self.scope = scope or trace_id
        """What ref ids derive from: the trace, or the trace a replay was made from (so the
        replay names the same content with the same ids)."""
        self.refs: list[ContextRef] = []

    def make(
        self,
        kind: str,
        content: str,
        description: str,
        key: str | None = None,
        *,
        image_blocks: int = 0,
        size_bytes: int | None = None,
        metadata: JSON = None,
    ) -> ContextRef:
        """A ref for ``content``; ``key`` (a domain id) replaces the content hash in its id."""
        ref_id = make_ref_id(kind, self.scope, key or content_key(content))
        existing = next((r for r in self.refs if r.id == ref_id), None)
        if existing is not None:
            return existing
        ref = ContextRef(
            id=ref_id,
            trace_id=self.trace_id,
            kind=kind,
            description=description,
            tokens=0 if image_blocks else count_text(content),
            bytes=len(content.encode("utf-8")) if size_bytes is None else size_bytes,
            image_blocks=image_blocks,
            content=content,
            metadata={"tool": self.tool, **(metadata or {})},
        )
        self.refs.append(ref)
        return ref

    def image(self, image: ImageData) -> ContextRef:
        desc = image.description or f"image from {self.tool}"
        return self.make("image", image.url, desc, image_blocks=1, size_bytes=image.size_bytes)


Slimmer = Callable[[ToolOutput, RefMaker, SlimPolicy], SlimView]
"""A tool-specific slimmer: builds the slim view and may cut extra refs with the maker."""


@dataclass(frozen=True, slots=True)
class SlimResult:
    """What to store as the tool result's content, and the refs to store with it."""

    content: str
    refs: tuple[ContextRef, ...]
    slimmed: bool
    original_tokens: int
    original_bytes: int

    def metadata(self) -> dict[str, Any]:
        """For the tool result message's ``metadata`` (the UI shows what was slimmed)."""
        if not self.slimmed:
            return {}
        return {
            "slimmed": True,
            "refs": [r.id for r in self.refs],
            "original_tokens": self.original_tokens,
            "original_bytes": self.original_bytes,
        }


def ref_entry(ref: ContextRef) -> dict[str, Any]:
    """How a ref is listed in a slim view."""
    entry: dict[str, Any] = {"ref": ref.id, "kind": ref.kind, "description": ref.description}
    if ref.image_blocks:
        entry["image_blocks"] = ref.image_blocks
    else:
        entry["tokens"] = ref.tokens
    return entry


class SlimmerRegistry:
    """Tool-specific slimmers by tool name; the generic slimmer for every other tool."""

    def __init__(self) -> None:
        self._slimmers: dict[str, Slimmer] = {}

    def register(self, tool: str, slimmer: Slimmer) -> None:
        self._slimmers[tool] = slimmer

    def get(self, tool: str) -> Slimmer:
        return self._slimmers.get(tool, generic_slimmer)


def needs_slimming(output: ToolOutput, policy: SlimPolicy) -> bool:
    if output.images:
        return True
    if len(output.text.encode("utf-8")) > policy.max_bytes:
        return True
    return count_text(output.text) > policy.max_tokens


def slim_tool_output(
    trace_id: str,
    output: ToolOutput,
    policy: SlimPolicy | None = None,
    slimmers: SlimmerRegistry | None = None,
    scope: str | None = None,
) -> SlimResult:
    """Slim ``output`` if it is over the limit (or carries images); otherwise pass it on.
    ``scope``: derive ref ids from this instead of ``trace_id`` (``RefMaker.scope``)."""
    policy = policy or SlimPolicy()
    size = len(output.text.encode("utf-8"))
    if not needs_slimming(output, policy):
        return SlimResult(output.text, (), False, count_text(output.text), size)
    maker = RefMaker(trace_id, output.tool, scope)
    full = maker.make("tool_output", output.text, f"full output of {output.tool}")
    images = [maker.image(img) for img in output.images]
    slimmer = (slimmers or SlimmerRegistry()).get(output.tool)
    try:
        view = slimmer(output, maker, policy)
    except Exception as exc:  # a broken slimmer must not lose the output
        view = generic_slimmer(output, maker, policy)
        view.coverage["slimmer_error"] = f"{type(exc).__name__}: {exc}"
    listed = {e.get("ref") for e in view.refs}
    view.refs[:0] = [ref_entry(r) for r in (full, *images) if r.id not in listed]
    return SlimResult(view.to_text(), tuple(maker.refs), True, full.tokens, size)


# -- the generic slimmer -----------------------------------------------------------------
def generic_slimmer(output: ToolOutput, maker: RefMaker, policy: SlimPolicy) -> SlimView:
    """Structure of JSON outputs, head and tail of text outputs."""
    full = maker.refs[0] if maker.refs else maker.make("tool_output", output.text, "output")
    coverage: dict[str, Any] = {"complete": False, "full_output": full.id, "tokens": full.tokens}
    data = loads_or(output.text, None)
    if isinstance(data, (dict, list)):
        coverage["shown"] = "structure and short fields only"
        unresolved = _carried_unresolved(data)
        return SlimView(_describe_json(data, policy), [], coverage, unresolved)
    if not output.text.strip() and output.images:
        coverage.update(complete=True, shown="images as refs")
        return SlimView({"type": "images", "count": len(output.images)}, [], coverage, [])
    summary, shown = _describe_text(output.text, policy)
    coverage["shown"] = shown
    return SlimView(summary, [], coverage, [])


def _describe_json(data: JSON, policy: SlimPolicy) -> JSON:
    if isinstance(data, list):
        return {"type": "list", **_list_shape(data)}
    fields_ = list(data.items())
    out: dict[str, Any] = {
        k: _describe_value(v) for k, v in fields_[: policy.max_fields] if not _is_unresolved(k)
    }
    if len(fields_) > policy.max_fields:
        out["…"] = f"{len(fields_) - policy.max_fields} more fields"
    return {"type": "object", "fields": out}


def _describe_value(value: JSON) -> JSON:
    if isinstance(value, str):
        return value if len(value) <= 80 else f"text ({len(value)} chars): {value[:60]}…"
    if isinstance(value, list):
        return _list_shape(value)
    if isinstance(value, dict):
        keys = list(value)
        more = f" (+{len(keys) - 12})" if len(keys) > 12 else ""
        return {"object_keys": keys[:12], "more": more} if more else {"object_keys": keys}
    return value


def _list_shape(items: list[Any]) -> dict[str, Any]:
    shape: dict[str, Any] = {"items": len(items)}
    dicts = [i for i in items[:50] if isinstance(i, dict)]
    if dicts:
        keys: dict[str, None] = {}
        for d in dicts:
            keys.update(dict.fromkeys(d))
        shape["item_fields"] = list(keys)[:20]
    elif items and not isinstance(items[0], list):
        shape["first"] = [_describe_value(i) for i in items[:3]]
    return shape


def _is_unresolved(key: str) -> bool:
    return key.lower().replace("_", "") in ("unresolved", "unresolvedquestions")


def _carried_unresolved(data: JSON) -> list[str]:
    if not isinstance(data, dict):
        return []
    for key, value in data.items():
        if _is_unresolved(key) and isinstance(value, list):
            return [str(v) for v in value][:20]
    return []


def _describe_text(text: str, policy: SlimPolicy) -> tuple[dict[str, Any], str]:
    lines = text.splitlines()
    head: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > policy.preview_chars:
            break
        head.append(line)
        used += len(line) + 1
    if not head and lines:
        head = [lines[0][: policy.preview_chars] + "…"]
    tail = lines[-2:] if len(lines) > len(head) + 2 else []
    summary = {"type": "text", "lines": len(lines), "chars": len(text), "head": "\n".join(head)}
    if tail:
        summary["tail"] = "\n".join(line[:200] for line in tail)
    return summary, f"first {len(head)} and last {len(tail)} of {len(lines)} lines"
