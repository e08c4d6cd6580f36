"""Recursive delegation (SPEC DEL-1..4, issue 15): a parent hands a child a normalized
TaskBrief and exact, versioned context-ref snapshots, never its own history.

- ``config.py``: the limits (one dataclass, every number a setting);
- ``normal.py``: canonical JSON, NaN/Infinity refusal, stable de-duplication, SHA-256;
- ``anchor.py``: the RootTaskAnchor, one authoritative copy per recursive root;
- ``brief.py``: TaskBrief normalization, constraint inheritance, approval matching, diffs;
- ``snapshots.py``: ContextRef snapshots, the local catalogue, grants and their limits;
- ``validator.py``: the validator packet the runtime assembles;
- ``store.py``: the append-only tables; ``report.py``: the delegation view (JSON);
- ``context.py``: what a trace sees of the protocol (task context, ``get_current_context``);
- ``runtime.py``, ``runner.py``, ``tools.py``: settings, ``DelegatingRunner``, ``agent()`` and
  ``read_context_ref`` in a real run; ``anchor_file.py``: ``ctxlens run --anchor FILE``.
See docs/delegation.md.
"""
