"""The prompt a context stands for, and how it is known (the one measure of free space).

ctxlens counts a context's text; a call's usage may record the prompt the model actually
received (with the system prompt, tool definitions and whatever the tool did not log), and
images have only an estimate. ``prompt_measure`` combines them exactly as the Context pane
draws them (``core/inspector/context_report.py:ContextReport.parts``): the counted
components, ``images (estimated)``, and ``not in the transcript`` (the record minus the
rest). Their sum is what the window holds, what free space and every limit are measured
by — in the Context pane, in the Budget pane (live and during playback) and in
``ctxlens context --json``. ``basis`` says what that sum is: the ``recorded`` prompt, a
``counted`` one, or an ``estimated`` one (the next call of an import, measured at its last
recorded call; or images' estimate without a record that covers them), so an estimate is
always shown with "≈".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.fields_json import FieldsJson
from core.inspector.images import IMAGES_ESTIMATED
from core.inspector.recorded import with_unexplained


@dataclass(frozen=True)
class PromptMeasure(FieldsJson):
    tokens: int
    """The prompt the window holds: the sum of ``parts``."""
    counted: int
    """ctxlens's count of the context's text."""
    recorded: int | None
    """The prompt tokens the call's usage recorded (``None``: none recorded)."""
    basis: str
    """``recorded`` (``tokens`` is the record), ``counted`` or ``estimated``."""
    parts: dict[str, int] = field(default_factory=dict)

    @property
    def estimated(self) -> bool:
        return self.basis == "estimated"

    @property
    def approx(self) -> str:
        """``"≈ "`` before an estimated number, else nothing."""
        return "≈ " if self.estimated else ""

    def headline(self) -> str:
        """The prompt in words, for a sentence that goes on with its status:
        ``<b>166,759</b> tokens, the recorded prompt (109,997 counted in the transcript)``,
        ``≈ <b>77,406</b> tokens, estimated (34,252 counted in the transcript)``,
        ``<b>6,625</b> tokens counted (recorded prompt 6,566)``."""
        n = f"<b>{self.tokens:,}</b> tokens"
        counted = (
            f" ({self.counted:,} counted in the transcript)" if self.counted != self.tokens else ""
        )
        if self.basis == "recorded":
            return f"{n}, the recorded prompt{counted}"
        if self.basis == "estimated":
            return f"≈ {n}, estimated{counted}"
        rec = f" (recorded prompt {self.recorded:,})" if self.recorded is not None else ""
        return f"{n} counted{rec}"


def prompt_measure(
    by_component: Mapping[str, int],
    image_tokens: int = 0,
    recorded: int | None = None,
    carried: int | None = None,
) -> PromptMeasure:
    """``by_component``: the counted context; ``image_tokens``: its images' estimate;
    ``recorded``: the call's recorded prompt tokens; ``carried``: for the next call of an
    import, the part its transcript lacks as measured at its last recorded call
    (``core/inspector/recorded.py:CarriedGap``)."""
    counted = sum(by_component.values())
    by = dict(by_component)
    if image_tokens:
        by[IMAGES_ESTIMATED] = image_tokens
    if recorded is not None:
        unexplained: int | None = recorded - counted - image_tokens
    else:
        unexplained = carried
    parts = with_unexplained(by, unexplained)
    tokens = sum(parts.values())
    if recorded is not None and tokens == recorded:
        basis = "recorded"
    elif carried is not None or image_tokens:
        basis = "estimated"
    else:
        basis = "counted"
    return PromptMeasure(tokens, counted, recorded, basis, parts)
