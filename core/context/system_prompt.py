"""The system prompt (SPEC INJ-1): chosen by a priority chain, assembled static-first.

Priority: a system message in the messages given to the run > the run config's prompt >
the preset's prompt > the built-in default. A system message the caller wrote is used
verbatim (the caller took control of the whole prompt); the other three supply the
identity section, and ctxlens adds the rest in a fixed order — identity, tools, skills,
memory, principles — so the stable parts form a prefix provider prompt caches can reuse
(seed B 1.2). The prompt is built once per trace and stored as its first message;
``core/context/initial.py`` never builds it again when the trace already has one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from core.records import NewMessage
from core.skills.skill import Skill

PromptSource = Literal["messages", "config", "preset", "default"]

SECTION_ORDER = ("identity", "tools", "skills", "memory", "principles")

DEFAULT_IDENTITY = (
    "You are a careful, methodical agent. You work through tasks step by step with the "
    "tools you are given, keep a goal tree of what is done and what is left, and finish "
    "with a clear, sourced answer."
)

DEFAULT_PRINCIPLES = (
    "Plan with the goal tool; keep one goal in focus and close it with a summary that "
    "names results and refs.",
    "Never redo a completed step: check the goal tree and the latest summary first.",
    "Cite stable ids (ref ids, evidence windows, file paths) for every conclusion.",
    "Large tool outputs arrive as summaries with refs; open a ref with read_ref only "
    "when the summary is not enough.",
    "Follow the latest user constraints; they override earlier ones.",
    "When data is missing or partial, say so and list it as unresolved instead of guessing.",
    "Stop and answer when the budget nudge tells you to.",
)

MAX_MEMORIES = 5
TOOL_LINE_CHARS = 120


class ToolInfo(Protocol):
    """What the system prompt needs from a tool registry entry."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ToolLine:
    """A minimal ``ToolInfo`` (a name and a description)."""

    name: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class PromptSection:
    """One part of the prompt, named as in ``SECTION_ORDER``."""

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    """The assembled prompt, where its identity came from, and its sections in order."""

    text: str
    source: PromptSource
    sections: tuple[PromptSection, ...]

    def to_message(self, agent_name: str = "main") -> NewMessage:
        meta = {"source": self.source, "sections": [s.name for s in self.sections]}
        return NewMessage(
            "system", self.text, kind="system_prompt", agent_name=agent_name, metadata=meta
        )


def choose_identity(
    messages: Sequence[Mapping[str, Any]] = (),
    config_prompt: str | None = None,
    preset_prompt: str | None = None,
    default: str = DEFAULT_IDENTITY,
) -> tuple[str, PromptSource]:
    """Apply the priority chain; empty strings count as absent."""
    for m in messages:
        if m.get("role") == "system" and _text(m.get("content")).strip():
            return _text(m.get("content")), "messages"
    if config_prompt and config_prompt.strip():
        return config_prompt, "config"
    if preset_prompt and preset_prompt.strip():
        return preset_prompt, "preset"
    return default, "default"


def build_system_prompt(
    *,
    messages: Sequence[Mapping[str, Any]] = (),
    config_prompt: str | None = None,
    preset_prompt: str | None = None,
    default_identity: str = DEFAULT_IDENTITY,
    tools: Sequence[ToolInfo] = (),
    skills: Sequence[Skill] = (),
    memories: Sequence[str] = (),
    principles: Sequence[str] = DEFAULT_PRINCIPLES,
    max_memories: int = MAX_MEMORIES,
) -> SystemPrompt:
    """Assemble the prompt. ``memories`` are newest first; at most ``max_memories`` show."""
    identity, source = choose_identity(messages, config_prompt, preset_prompt, default_identity)
    if source == "messages":
        return SystemPrompt(identity, source, (PromptSection("identity", identity),))
    candidates = {
        "identity": identity.strip(),
        "tools": _tools_section(tools),
        "skills": _skills_section(skills),
        "memory": _memory_section(memories[:max_memories]),
        "principles": _principles_section(principles),
    }
    sections = tuple(PromptSection(n, candidates[n]) for n in SECTION_ORDER if candidates[n])
    return SystemPrompt("\n\n".join(s.text for s in sections), source, sections)


def one_line(description: str, limit: int = TOOL_LINE_CHARS) -> str:
    """First line of a description, cut at ``limit`` characters."""
    first = description.strip().splitlines()[0].strip() if description.strip() else ""
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def _tools_section(tools: Sequence[ToolInfo]) -> str:
    if not tools:
        return ""
    lines = [
        f"- {t.name}: {one_line(t.description)}" if t.description else f"- {t.name}" for t in tools
    ]
    return "## Tools\n" + "\n".join(lines)


def _skills_section(skills: Sequence[Skill]) -> str:
    if not skills:
        return ""
    body = "\n".join(s.listing_line() for s in skills)
    return (
        "## Skills\n<system-reminder>\nSkills you can load with skill(name=...):\n"
        f"{body}\n</system-reminder>"
    )


def _memory_section(memories: Sequence[str]) -> str:
    items = [m.strip() for m in memories if m.strip()]
    if not items:
        return ""
    return "## Project memory\n" + "\n".join(f"- {m}" for m in items)


def _principles_section(principles: Sequence[str]) -> str:
    if not principles:
        return ""
    return "## Principles\n" + "\n".join(f"{i}. {p}" for i, p in enumerate(principles, 1))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)
