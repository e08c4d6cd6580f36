"""The New demo run dialog takes any run setting as key=value (issue 14): a bad key is
shown in the dialog (which stays open), a good one reaches the runner of the new trace."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtWidgets import QDialogButtonBox

from core.demo.scenario import create_demo_trace, open_demo_run
from core.store import Store
from ui.dialogs.new_demo import NewDemoDialog


def _ok(dialog: NewDemoDialog) -> None:
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()


def test_settings_are_checked_and_reach_the_run(qtbot: Any, store: Store) -> None:
    dialog = NewDemoDialog()
    qtbot.addWidget(dialog)
    chosen: list[Any] = []
    dialog.chosen.connect(chosen.append)
    dialog.show()
    dialog.settings.setPlainText("micro_keep_recnt=6")
    _ok(dialog)
    assert not chosen and dialog.isVisible()
    assert "micro_keep_recent" in dialog.error.text() and dialog.error.isVisible()
    dialog.settings.setPlainText("micro_keep_recent=6\nduplicate_limit=4")
    _ok(dialog)
    assert chosen and chosen[0].settings == ("micro_keep_recent=6", "duplicate_limit=4")
    trace_id = create_demo_trace(store, chosen[0])

    async def config() -> Any:
        async with open_demo_run(store, trace_id) as runner:
            return runner.config

    cfg = asyncio.run(config())
    assert cfg.micro_keep_recent == 6 and cfg.duplicate_limit == 4
