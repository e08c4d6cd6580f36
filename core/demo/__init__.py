"""The demo scenario (seed C's story): 30 days of events over 500k entities → top 10 risk
entities with evidence-window refs. Deterministic world, tools and script; no network.

Importing the package registers how its traces run again (``core/demo/rerun.py``)."""

from core.demo import rerun as _rerun

_rerun.register()
