"""The ``read_ref`` tool: the model's way to request a grant (SPEC REF-3).

``read_ref(ref="out-…", reason="…", offset=0, length=8000)``. The result is the granted
content (a text ref, or a slice of it), a note that an image follows in the next message,
or a clear refusal/deferral naming the limit. The run loop calls ``plan_read_ref`` when
executing the tool, appends ``plan.tool_result(call.id)`` (and, for an image,
``plan.content_message()`` after all tool results of the round), then
``ledger.commit(...)`` with the content message's sequence or ``ledger.record_denial(...)``.
"""

from __future__ import annotations

import json
from typing import Any

from core.records import ToolCall
from core.refs.budget import BudgetDecision, ContextLoad, GrantCost
from core.refs.grants import GrantLedger, GrantPlan, GrantRequest
from core.store.reader import Reader
from core.tool_schema import function_schema

READ_REF = "read_ref"


def read_ref_schema() -> dict[str, Any]:
    """OpenAI function schema of ``read_ref``."""
    return function_schema(
        READ_REF,
        "Load a ref's content (tool output, image, evidence window) into "
        "the context. Charged to the context budget; read big text refs in slices.",
        {
            "type": "object",
            "properties": {
                "ref": {"type": "string", "description": "ref id, e.g. out-3f9a1c2b7e4d"},
                "reason": {"type": "string", "description": "why you need it"},
                "offset": {"type": "integer", "description": "first character (text)"},
                "length": {"type": "integer", "description": "characters to read (text)"},
            },
            "required": ["ref"],
        },
    )


def parse_request(call: ToolCall) -> GrantRequest | str:
    """The grant request in a ``read_ref`` call, or an error text for the model."""
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"read_ref arguments are not valid JSON ({exc.msg})"
    if not isinstance(args, dict) or not isinstance(args.get("ref"), str) or not args["ref"]:
        return "read_ref needs a 'ref' argument (a ref id such as out-3f9a1c2b7e4d)"
    try:
        offset = int(args.get("offset") or 0)
        length = None if args.get("length") is None else int(args["length"])
    except (TypeError, ValueError):
        return "read_ref 'offset' and 'length' must be integers"
    reason = str(args.get("reason") or "requested by the model")
    return GrantRequest(args["ref"].strip(), "model", reason, offset, length, call.id)


def plan_read_ref(
    reader: Reader, trace_id: str, ledger: GrantLedger, call: ToolCall, load: ContextLoad
) -> GrantPlan:
    """Decide a ``read_ref`` call against the ledger's budget."""
    request = parse_request(call)
    if isinstance(request, str):
        bad = GrantRequest("", "model", request, tool_call_id=call.id)
        return GrantPlan(bad, BudgetDecision("refuse", request, GrantCost()), None)
    return ledger.plan(reader, trace_id, request, load)
