"""Dockable panes of the main window; each reads its data from ``core.inspector``."""
