"""Live capture: traces that grow while an agent runs (watched session folders, OTLP)."""
