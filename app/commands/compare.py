"""``ctxlens compare``: two traces call by call (tokens, compactions, contexts, retention,
metrics) as JSON or a self-contained HTML report (``core/replay/compare.py``)."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path

from app.cli import CliContext
from core.atomic_write import write_atomically
from core.errors import CtxlensError

HELP = "compare two traces (a run and its replay)"


def arguments(p: ArgumentParser) -> None:
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report here")
    p.add_argument("--json", action="store_true")


def run(ctx: CliContext) -> int:
    from core.inspector.comparison import abandoned_note
    from core.replay.compare import basis_text, compare

    a = ctx.args
    cmp = compare(ctx.store(), a.a, a.b)
    if a.html:
        from core.replay.report import html_report

        _write(Path(a.html), html_report(cmp))
    if a.json:
        ctx.emit_json(cmp.to_json())
        return 0
    s = cmp.summary
    tok, every = s["input_tokens"], s["input_tokens_all_calls"]
    left_out = abandoned_note(cmp)
    ctx.out.write(
        f"A {cmp.a.trace_id} vs B {cmp.b.trace_id}: main calls {s['main_calls']['a']} / "
        f"{s['main_calls']['b']}, input tokens of the main agent's calls {tok['a']:,} / "
        f"{tok['b']:,} "
        f"({basis_text(cmp.a.input_basis) or 'none'} / {basis_text(cmp.b.input_basis) or 'none'}; "
        f"B/A {tok['ratio']}), of all calls {every['a']:,} / {every['b']:,}, "
        f"compactions {s['compactions']['a']} / {s['compactions']['b']}, "
        f"redone tool calls {s['redone_tool_calls']['a']} / {s['redone_tool_calls']['b']}, "
        f"same context in {s['same_context_calls']} calls"
        + (f"; report: {a.html}" if a.html else "")
        + "\n"
        + (f"{left_out}\n" if left_out else "")
    )
    return 0


def _write(target: Path, text: str) -> None:
    if not target.parent.is_dir():
        raise CtxlensError(f"{target}: folder {target.parent} does not exist")
    write_atomically(target, lambda f: f.write(text), ".ctxlens-report-")
