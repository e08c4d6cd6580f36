"""The delegation demo's one tool: ``write_file`` into an in-memory workspace.

A delegated child produces a file and names it in its report (``Artifact: ranking.md``),
so the validator's "resolved artifacts" part has something real to resolve: the content
the child wrote, found in its own trace (``core/delegation/artifacts.py``). Nothing
touches the disk; the workspace lives as long as its run.
"""

from __future__ import annotations

from typing import Any

from core.run.tools import Tool, ToolContext, ToolRegistry, ToolResult

WRITE_FILE = "write_file"


def workspace_tools(files: dict[str, str] | None = None) -> ToolRegistry:
    """``write_file(path, content)`` into ``files`` (a fresh dict unless given)."""
    workspace: dict[str, str] = {} if files is None else files

    def write_file(args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        path, content = args.get("path"), args.get("content")
        if not isinstance(path, str) or not path.strip() or not isinstance(content, str):
            return ToolResult("Error: write_file needs a path and a content string", is_error=True)
        workspace[path] = content
        return ToolResult(f"Wrote {path} ({len(content)} characters).")

    return ToolRegistry().extend(
        [
            Tool(
                WRITE_FILE,
                "Write a text file of the task's workspace (name it in your report as "
                "'Artifact: PATH').",
                {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                    "required": ["path", "content"],
                },
                write_file,
                read_only=False,
            )
        ]
    )
