"""Issue 13 in the window: the Compact dialog's dry run on an import with an image lowers
the threshold by the image's estimate too (as ``ctxlens compact`` does), and says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.importers.api import import_paths
from core.store import Store
from tests.app.test_compact_image_threshold import WITH_IMAGES
from tests.ui.conftest import open_window, preview_auto_at
from ui.settings import AppSettings

SESSION = WITH_IMAGES[1]  # Claude Code 1.0.43 session with a pasted screenshot
pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason="shared traces not present")


def test_compact_dialog_counts_the_images_like_the_cli(
    qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Any
) -> None:
    db = tmp_path / "cc.db"
    with Store.open(db) as s:
        import_paths(s, [SESSION])
    win = open_window(qtbot, settings, db, (1400, 900))
    trace_id = win.session.trace().id
    args = ("--db", str(db), "compact", trace_id, "--level", "auto", "--json")
    plain = json.loads(cli(*args)[1])
    text, gap = plain["before"]["tokens"], plain["limits"]["not_in_transcript"]
    images, window = plain["limits"]["images_estimated"], plain["limits"]["window"]["tokens"]
    assert images > 0
    share = round((text + gap + images / 2) / window, 3)  # over with the images, under without
    assert window * share - gap - images < text < window * share - gap
    code, out = cli(*args, "--threshold", str(share))
    expected = json.loads(out)
    assert code == 0 and expected["status"] != "not_needed"

    dialog, cp = preview_auto_at(qtbot, win, share)
    assert (cp.request.not_in_transcript, cp.request.images_estimated) == (gap, images)
    got = cp.preview.to_json()
    for key in ("status", "reason", "before", "after", "tokens_saved", "layers"):
        assert got[key] == expected[key], key
    label = dialog.trace_label.text()
    assert (
        f"of which {gap:,} are not in the transcript and {images:,} are images (estimated)" in label
    )
    dialog.reject()

    # at the trace's own threshold: not needed, against the threshold the label names less
    # what the compactor does not count (hcmp: it read "… — 151234 <= 160000")
    own = plain["limits"]["threshold"]
    assert plain["status"] == "not_needed"
    dialog, cp = preview_auto_at(qtbot, win, own["share"])
    o = cp.preview.outcome
    assert o.status == "not_needed" and o.limit == plain["limit_tokens"]
    assert dialog.headline.text() == (
        f"auto: not needed — the context's {text:,} tokens are within the "
        f"{plain['limit_tokens']:,}-token threshold (the {own['tokens']:,}-token threshold less "
        f"{gap:,} not in the transcript and {images:,} in images (estimated))"
    )
    dialog.reject()
