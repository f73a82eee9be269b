"""The observation record: everything the agent observes this step, as one text.

Form (sections appear when their channel is on)::

    Observation Record — Step N (t = 48.7s)
    [AUDIO CONTEXT — last 60 seconds]
    [RECENT AUDIO — ...]
    [VISUAL — keyframes captured since last step]
    [NARRATION]
    [PAGE ELEMENTS — ...]
    [TASK] ...
    [LAST ACTION ERROR] ...
    [PRIOR ACTIONS] Step N-1: wait 3s ...

Channel wrappers put their section's text into :class:`RecordParts` and re-render; the record is
always derived from the same parts as the observation, never edited in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

MAX_PRIOR_ACTIONS = 10  # prior actions listed in the record; older ones are counted
MAX_RECORD_CHARS = 100_000  # the record's Text space bound

# Sections in the order they appear, between the header and the task.
CHANNEL_SECTIONS = ("audio_context", "recent_audio", "visual", "narration", "elements")


@dataclass(frozen=True)
class RecordParts:
    """What a record is rendered from.

    Attributes:
        step: steps taken since reset.
        elapsed: seconds since the episode started.
        instruction: the task instruction.
        prior_actions: text form of every action so far, oldest first.
        last_action_error: why the last action failed, or "".
        sections: channel name (see ``CHANNEL_SECTIONS``) -> the section's body text.
    """

    step: int
    elapsed: float
    instruction: str
    prior_actions: tuple[str, ...] = ()
    last_action_error: str = ""
    sections: dict[str, str] = field(default_factory=dict)

    def with_section(self, name: str, body: str) -> RecordParts:
        """A copy with one channel section set."""
        if name not in CHANNEL_SECTIONS:
            raise ValueError(f"expected a section in {CHANNEL_SECTIONS}, got {name!r}")
        return replace(self, sections={**self.sections, name: body})


_HEADINGS = {
    "audio_context": "[AUDIO CONTEXT — last 60 seconds]",
    "recent_audio": "[RECENT AUDIO]",
    "visual": "[VISUAL — keyframes captured since last step]",
    "narration": "[NARRATION]",
    "elements": "[PAGE ELEMENTS]",
}


def render_record(parts: RecordParts) -> str:
    """The record text for ``parts``."""
    lines = [f"Observation Record — Step {parts.step} (t = {parts.elapsed:.1f}s)"]
    for name in CHANNEL_SECTIONS:
        if name in parts.sections:
            body = parts.sections[name]
            # A section whose body starts with its own heading line (with details) keeps it.
            if body.startswith("["):
                lines.append(body)
            else:
                lines.append(_HEADINGS[name])
                lines.append(body if body else "  (nothing)")
    lines.append(f"[TASK] {parts.instruction}")
    if parts.last_action_error:
        lines.append(f"[LAST ACTION ERROR] {parts.last_action_error}")
    lines.append("[PRIOR ACTIONS]" + ("" if parts.prior_actions else " (none)"))
    first = max(0, len(parts.prior_actions) - MAX_PRIOR_ACTIONS)
    if first:
        lines.append(f"  ({first} earlier actions not shown)")
    for i in range(first, len(parts.prior_actions)):
        lines.append(f"  Step {i + 1}: {parts.prior_actions[i]}")
    text = "\n".join(lines)
    if len(text) > MAX_RECORD_CHARS:
        text = text[: MAX_RECORD_CHARS - 1] + "\u2026"
    return text
