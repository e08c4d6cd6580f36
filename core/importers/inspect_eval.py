"""What an Inspect AI log says about its eval and each sample, as trace metadata.

Every sample trace carries ``metadata.eval`` (the eval's header: task, model, solver,
status, scores with their metrics, a key that groups the samples of one eval) and
``metadata.sample`` (id, epoch, input, target, answer, score): the trace browser groups
samples under their eval and sorts and filters them by score from these, without reading
messages. Texts are cut to ``MAX_TEXT`` characters (the full input is the first messages).
"""

from __future__ import annotations

from typing import Any

from core.importers.content import as_dict, as_list, text_of

MAX_TEXT = 500


def eval_summary(header: dict[str, Any], file: str) -> dict[str, Any]:
    """The eval's header in a few fields (``None`` fields left out)."""
    ev = as_dict(header.get("eval"))
    results = as_dict(header.get("results"))
    error = as_dict(header.get("error"))
    out = {
        "key": str(ev.get("eval_id") or ev.get("run_id") or file) + f"/{ev.get('task_id') or ''}",
        "file": file,
        "task": ev.get("task"),
        "model": ev.get("model"),
        "solver": solver_of(header),
        "status": header.get("status"),
        "created": ev.get("created"),
        "dataset": as_dict(ev.get("dataset")).get("name"),
        "total_samples": results.get("total_samples"),
        "completed_samples": results.get("completed_samples"),
        "scores": [_scorer(s) for s in as_list(results.get("scores")) if isinstance(s, dict)],
        "error": error.get("message"),
    }
    return {k: v for k, v in out.items() if v not in (None, [], "")}


def solver_of(header: dict[str, Any]) -> str | None:
    """The solver as Inspect names it: ``eval.solver``, else the plan's steps joined."""
    ev = as_dict(header.get("eval"))
    if ev.get("solver"):
        return str(ev["solver"])
    steps = as_list(as_dict(header.get("plan")).get("steps"))
    names = [str(as_dict(s).get("solver")) for s in steps if as_dict(s).get("solver")]
    return " → ".join(names) or None


def _scorer(score: dict[str, Any]) -> dict[str, Any]:
    metrics = {
        str(name): as_dict(m).get("value") for name, m in as_dict(score.get("metrics")).items()
    }
    return {"scorer": score.get("name") or score.get("scorer"), "metrics": metrics}


def sample_summary(sample: dict[str, Any], resolve: Any) -> dict[str, Any]:
    """Id, epoch, input, target, answer and the first scorer's value of one sample."""
    scores = as_dict(sample.get("scores"))
    name, first = next(iter(scores.items()), (None, None))
    first = as_dict(first)
    output = as_dict(sample.get("output"))
    answer = first.get("answer")
    if answer is None:
        answer = output.get("completion")
    out = {
        "id": sample.get("id"),
        "epoch": sample.get("epoch"),
        "input": _cut(_text(resolve(sample.get("input")))),
        "target": _cut(_text(resolve(sample.get("target")))),
        "answer": _cut(_text(resolve(answer))) if answer is not None else None,
        "score": first.get("value") if name is not None else None,
        "scorer": name,
        "error": as_dict(sample.get("error")).get("message"),
    }
    return {k: v for k, v in out.items() if v is not None}


def sample_title(task: str, sample: dict[str, Any]) -> str:
    """``task #id (epoch n): the input's start``: what the sample asked."""
    first = " ".join(str(sample.get("input") or "").split())
    head = f"{task} #{sample.get('id')} (epoch {sample.get('epoch')})"
    return f"{head}: {first[:100]}" if first else head


def _text(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " | ".join(value)  # several targets
    return text_of(value)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def has_content(sample: dict[str, Any]) -> bool:
    """A sample with messages (a log of an eval that never ran holds empty ones; those
    are skipped rather than stored as empty traces)."""
    return bool(as_list(sample.get("messages")))
