"""Search across every trace of the open store (issue 21): a window beside the inspector."""
