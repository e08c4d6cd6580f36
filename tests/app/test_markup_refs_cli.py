"""A closing tag is markup, not a file path (review of h14).

A loaded skill ends with ``</skill>`` (``core/skills/tool.py:render_skill``); the path
pattern of ``core/context/compaction/facts.py`` took ``/skill`` from it as an absolute
path, so the demo run's compaction placeholders told the model ``Refs: …, /skill, …`` and
the retention report counted ``/skill`` as a key ref kept or lost. Checked on the demo run
(its compactions as the run loop recorded them, ``ctxlens export``) and on a dry run of
``ctxlens compact`` (placeholder and retention report), beside real paths that must stay."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from core.context.compaction.facts import find_refs
from tests.helpers.shared_demo import demo_copy

Cli = Callable[..., tuple[int, str]]
REFS_LINE = re.compile(r"^Refs: (.*)$", re.M)


def _refs_lines(value: object) -> list[str]:
    """Every ref the ``Refs:`` lines of the strings in ``value`` (any JSON) name."""
    if isinstance(value, str):
        return [ref for line in REFS_LINE.findall(value) for ref in line.split(", ")]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [ref for v in value for ref in _refs_lines(v)]
    return []


def test_the_demo_runs_placeholders_and_retention_name_no_closing_tag(
    cli: Cli, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    db, trace = demo_copy(tmp_path_factory, tmp_path / "store")
    code, out = cli("--db", str(db), "export", trace)
    assert code == 0
    export = json.loads(out)
    skills = [m for m in export["messages"] if "</skill>" in m["content"]]
    assert skills, "the demo loads skills (their text ends with </skill>)"
    named = [ref for c in export["compactions"] for ref in _refs_lines(c["context_after"])]
    assert named, "the run's compactions left placeholders that list refs"
    assert "/skill" not in named, "a closing tag reached the model as a file path"

    for level in ("goal", "summary"):
        code, out = cli("--db", str(db), "compact", trace, "--level", level, "--json")
        assert code == 0
        data = json.loads(out)
        assert data["status"] == "compacted", data["reason"]
        refs = data["retention"]["refs"]
        assert refs["kept"] or refs["lost"]
        assert "/skill" not in refs["kept"] + refs["lost"], level
        assert "/skill" not in _refs_lines(data["context_after"]), level


@pytest.mark.parametrize(
    ("text", "refs"),
    [
        ("</skill>", []),
        ("done.</skill>", []),
        ("<tool_result>/work/a.py:12</tool_result>", ["/work/a.py"]),
        ("&lt;/skill&gt;", []),
        ("</ns:tag>", []),
        ("<path>/etc/hosts</path>", ["/etc/hosts"]),
        ("</etc/hosts>", ["/etc/hosts"]),
        ("see https://x.io/y/z.", ["https://x.io/y/z"]),
        ('<img src="/a/b.png"/>', ["/a/b.png"]),
        ("(~/notes.md) and ./run.sh", ["~/notes.md", "./run.sh"]),
    ],
)
def test_closing_tags_are_not_paths_and_real_paths_stay(text: str, refs: list[str]) -> None:
    assert find_refs(text) == refs
