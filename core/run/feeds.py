"""Context feeds a caller points a run at (INJ-2): collaborators, notifications and named
sections of the periodic context, each from a literal text or a file re-read at every
injection (another process may keep it current while the run goes on)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from core.context.periodic import Collaborator, ContextSources, InjectionHooks
from core.errors import InvalidInputError

#: Feed names with their own part of the context; any other name is a section of its own.
COLLABORATORS, NOTIFICATIONS = "collaborators", "notifications"
T = TypeVar("T")


def text_or_file(value: str, what: str) -> str:
    """``TEXT`` as given, ``@FILE`` as the file's text (an error names the file)."""
    if not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{what}: cannot read {path}: {exc}") from None


@dataclass(frozen=True)
class Feed:
    """One ``NAME=TEXT`` or ``NAME=@FILE`` feed."""

    name: str
    value: str

    @classmethod
    def parse(cls, spec: str) -> Feed:
        name, sep, value = spec.partition("=")
        if not sep or not name.strip() or not value:
            raise InvalidInputError(f"--feed {spec!r}: expected NAME=TEXT or NAME=@FILE")
        feed = cls(name.strip(), value)
        feed.check()
        return feed

    def text(self) -> str:
        return text_or_file(self.value, f"--feed {self.name}")

    def check(self) -> None:
        """Read and parse it once now, so a bad feed stops the run before it starts."""
        if self.name == COLLABORATORS:
            self.collaborators()
        else:
            self.text()

    def collaborators(self) -> list[Collaborator]:
        """A JSON list of ``{name, status, detail}``, or lines ``name: status[: detail]``."""
        text = self.text().strip()
        if text.startswith("["):
            return _collaborators_json(text, self.value)
        return [_collaborator_line(line) for line in text.splitlines() if line.strip()]

    def notifications(self) -> list[str]:
        return [line.strip() for line in self.text().splitlines() if line.strip()]


def feed_sources(feeds: Sequence[Feed]) -> ContextSources | None:
    """What the run's periodic context reads from these feeds (``None``: no feeds)."""
    if not feeds:
        return None
    hooks = InjectionHooks()
    for feed in feeds:
        if feed.name not in (COLLABORATORS, NOTIFICATIONS):
            hooks.register(feed.name, feed.text)
    return ContextSources(
        collaborators=_joined(
            feeds, COLLABORATORS, Feed.collaborators, lambda why: Collaborator("feed", why)
        ),
        notifications=_joined(feeds, NOTIFICATIONS, Feed.notifications, str),
        hooks=hooks,
    )


def _joined(
    feeds: Sequence[Feed], name: str, read: Callable[[Feed], list[T]], failed: Callable[[str], T]
) -> Callable[[], list[T]] | None:
    """All feeds of ``name`` read anew at each injection; one that became unreadable
    during the run says so in its part instead of stopping the run."""
    mine = [f for f in feeds if f.name == name]
    if not mine:
        return None

    def read_all() -> list[T]:
        out: list[T] = []
        for feed in mine:
            try:
                out += read(feed)
            except InvalidInputError as exc:
                out.append(failed(f"(feed failed: {exc})"))
        return out

    return read_all


def _collaborators_json(text: str, where: str) -> list[Collaborator]:
    try:
        rows = json.loads(text)
        return [
            Collaborator(str(r["name"]), str(r["status"]), str(r.get("detail", ""))) for r in rows
        ]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InvalidInputError(
            f"--feed collaborators={where}: expected a list of {{name, status, detail}}: {exc}"
        ) from None


def _collaborator_line(line: str) -> Collaborator:
    name, _, rest = line.partition(":")
    status, _, detail = rest.partition(":")
    return Collaborator(name.strip(), status.strip() or "unknown", detail.strip())
