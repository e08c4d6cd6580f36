"""The import formats by name (no importer code): what ``--format`` accepts and what
``ctxlens traces`` needs to tell imported traces from runs, without loading importers."""

FORMATS = ("claude-code", "codex", "otel", "inspect", "openhands", "swe-agent", "openai", "ctxlens")
