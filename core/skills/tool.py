"""The ``skill`` tool: what the model (or a caller injection) receives when loading a skill.

The same text is used for a model's own ``skill("name")`` call and for a caller-injected
one (INJ-3), so both look identical in the context.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.skills.registry import SkillRegistry
from core.skills.skill import Skill
from core.tool_schema import function_schema

SKILL_TOOL = "skill"


@dataclass(frozen=True, slots=True)
class SkillToolResult:
    """The tool result text, and the skill it loaded (``None`` on error)."""

    text: str
    skill: Skill | None

    @property
    def ok(self) -> bool:
        return self.skill is not None


def skill_tool_schema() -> dict[str, Any]:
    """OpenAI function schema of the ``skill`` tool."""
    return function_schema(
        SKILL_TOOL,
        "Load a skill (a strategy document) by name into the context.",
        {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "skill name"}},
            "required": ["name"],
        },
    )


def skill_call_arguments(name: str) -> str:
    """The canonical argument JSON of ``skill(name)`` (stable bytes: prompt caches hit)."""
    return json.dumps({"name": name}, ensure_ascii=False)


def render_skill(skill: Skill) -> str:
    """The text a loaded skill occupies in the context."""
    head = [f'<skill name="{skill.name}">', f"Description: {skill.description}"]
    if skill.when_to_use:
        head.append(f"When to use: {skill.when_to_use}")
    return "\n".join([*head, "", skill.body.strip(), "</skill>"])


def skill_tool_result(registry: SkillRegistry, arguments: str | dict[str, Any]) -> SkillToolResult:
    """Execute ``skill``: the rendered skill, or an error text naming the available skills."""
    name = _name_argument(arguments)
    if name is None:
        return SkillToolResult("Error: skill() needs a 'name' argument.", None)
    skill = registry.find(name)
    if skill is None:
        known = ", ".join(registry.names()) or "none"
        return SkillToolResult(f"Error: unknown skill {name!r}. Available: {known}.", None)
    return SkillToolResult(render_skill(skill), skill)


def _name_argument(arguments: str | dict[str, Any]) -> str | None:
    data: Any = arguments
    if isinstance(arguments, str):
        try:
            data = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return arguments.strip() or None
    if not isinstance(data, dict):
        return None
    name = data.get("name") or data.get("skill")
    return str(name).strip() if name else None
