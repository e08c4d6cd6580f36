"""What the inspector shows, computed from the store: rows, bands, reports, diffs.

The Qt layer (``ui/``) only displays these records; every decision about what a row says,
whether a message is in the context or how tokens split lives here, testable without Qt.
"""
