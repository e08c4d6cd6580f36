"""The demo's tools over the synthetic world, and their slimmers (REF-2).

Tools return raw, large outputs on purpose — a day's event dump, an evidence window — as a
real data tool would; the slimmers turn them into {summary, refs, coverage, unresolved}
with one ref per evidence window, so the context holds conclusions and stable ids.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core.demo.world import CATEGORIES, DAYS, ENTITIES, FILES, World
from core.refs import SlimmerRegistry, SlimPolicy, SlimView, ToolOutput
from core.refs.slimming import RefMaker
from core.run.tools import ImageBlob, Tool, ToolContext, ToolRegistry, ToolResult

VERIFIER_PROMPT = (
    "You are the evidence verifier subagent. Check the evidence windows you are given and "
    "report which ones support the risk finding. Answer with a short verdict per window."
)


def _params(optional: tuple[str, ...] = (), **props: Any) -> dict[str, Any]:
    required = [name for name in props if name not in optional]
    return {"type": "object", "properties": props, "required": required}


def demo_tools(world: World) -> ToolRegistry:
    def query_day(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        day = int(args["day"])
        if not 1 <= day <= DAYS:
            return ToolResult(f"Error: day must be 1..{DAYS}", is_error=True)
        return ToolResult(world.day_raw(day))

    def rank_entities(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        top = int(args.get("top", 10))
        rows = [
            {"rank": n + 1, "entity": e, "risk": s, "windows": world.evidence_windows(e)}
            for n, (e, s) in enumerate(world.top_entities[:top])
        ]
        totals = world.aggregate()
        return ToolResult(
            json.dumps({"entities_scanned": ENTITIES, "totals": totals, "top": rows}, indent=1)
        )

    def read_file(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = str(args["path"])
        if path not in FILES:
            return ToolResult(f"Error: no such file {path!r}", is_error=True)
        return ToolResult(FILES[path])

    def evidence_window(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        entity, window = str(args["entity"]), str(args["window"])
        if entity not in dict(world.top_entities):
            return ToolResult(f"Error: {entity} is not a ranked entity", is_error=True)
        return ToolResult(world.window_raw(entity, window))

    def render_chart(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        entity = str(args["entity"])
        png = world.chart_png(entity)
        return ToolResult(
            f"Chart of daily risk for {entity} rendered.",
            images=(ImageBlob(png, "image/png", f"daily risk chart of {entity}"),),
        )

    async def verify_evidence(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        entities = [str(e) for e in args.get("entities", [])]
        task = "Verify the evidence windows of: " + ", ".join(
            f"{e} ({', '.join(world.evidence_windows(e)[:2])})" for e in entities
        )
        sub = ToolRegistry().extend(
            [t for t in registry.tools.values() if t.name in ("evidence_window", "read_file")]
        )
        text = await ctx.runtime.spawn_subagent(
            task,
            name="verifier",
            system_prompt=VERIFIER_PROMPT,
            tools=sub,
            background=args.get("background") is True,
        )
        return ToolResult(text)

    async def write_report(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(0)
        rows = args.get("entities", [])
        lines = [f"{n + 1}. {r}" for n, r in enumerate(rows)]
        return ToolResult("Report written (report-top10.md):\n" + "\n".join(lines))

    registry = ToolRegistry()
    registry.extend(
        [
            Tool(
                "query_day",
                "Raw events of one day (1..30) across all entities.",
                _params(day={"type": "integer"}),
                query_day,
            ),
            Tool(
                "rank_entities",
                "Rank entities by 30-day risk score.",
                _params(top={"type": "integer"}),
                rank_entities,
            ),
            Tool("read_file", "Read a project file.", _params(path={"type": "string"}), read_file),
            Tool(
                "evidence_window",
                "Raw events of one evidence window of an entity.",
                _params(entity={"type": "string"}, window={"type": "string"}),
                evidence_window,
            ),
            Tool(
                "render_chart",
                "Render an entity's daily risk chart (an image).",
                _params(entity={"type": "string"}),
                render_chart,
            ),
            Tool(
                "verify_evidence",
                "Delegate evidence verification to a subagent.",
                _params(
                    entities={"type": "array", "items": {"type": "string"}},
                    background={"type": "boolean"},
                    optional=("background",),
                ),
                verify_evidence,
                read_only=False,
            ),
            Tool(
                "write_report",
                "Write the final report.",
                _params(entities={"type": "array", "items": {"type": "string"}}),
                write_report,
                read_only=False,
            ),
        ]
    )
    return registry


def demo_slimmers() -> SlimmerRegistry:
    reg = SlimmerRegistry()
    reg.register("query_day", _slim_day)
    reg.register("evidence_window", _slim_window)
    return reg


def _slim_day(output: ToolOutput, maker: RefMaker, policy: SlimPolicy) -> SlimView:
    lines = output.text.splitlines()
    day = json.loads(output.arguments).get("day")
    counts = dict.fromkeys(CATEGORIES, 0)
    for line in lines[1:]:
        for c in CATEGORIES:
            if f" {c} " in line:
                counts[c] += 1
    summary = {"day": day, "header": lines[0] if lines else "", "busiest_rows_by_category": counts}
    coverage = {"complete": True, "rows_in_ref": len(lines) - 1}
    return SlimView(summary, [], coverage, [])


def _slim_window(output: ToolOutput, maker: RefMaker, policy: SlimPolicy) -> SlimView:
    args = json.loads(output.arguments)
    window, entity = str(args.get("window")), str(args.get("entity"))
    ref = maker.make(
        "evidence_window",
        output.text,
        f"{window}: evidence window of {entity}",
        key=window,
        metadata={"key": window, "entity": entity},
    )
    rows = output.text.splitlines()[1:]
    days = sorted({r.split()[1] for r in rows if r.startswith("day ")})
    summary = {
        "entity": entity,
        "window": window,
        "events": len(rows),
        "days": f"{days[0]}..{days[-1]}" if days else "",
    }
    entry = {
        "ref": ref.id,
        "kind": "evidence_window",
        "window": window,
        "description": ref.description,
        "tokens": ref.tokens,
    }
    return SlimView(summary, [entry], {"complete": True}, [])
