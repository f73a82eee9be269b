"""What a watched episode let its watcher perceive, read back from its trace."""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dynacu_gym.harness.audit.keys import enough, key_found, puts_on_screen
from dynacu_gym.harness.audit.reading import ocr
from dynacu_gym.harness.trace import OUTCOME_FILE, TRACE_FILE

# The screenshot-only agents the chance is taken over: steps of 0.8 to 1.2 times the step (an
# agent's pace varies, and a page that loops every 20 s must not look different to one stepping
# every 10 s exactly), each at PHASES phases.
STEP_SPREAD = (0.8, 0.9, 1.0, 1.1, 1.2)
PHASES = 8
# A transcript line in a record: (12.3s–15.0s) "what was said"
_HEARD = re.compile(r"^\((\d+(?:\.\d+)?)s–(\d+(?:\.\d+)?)s\) \"(.*)\"", re.M)


@dataclass(frozen=True)
class Observed:
    """What one watched episode let the watcher perceive, with times (episode seconds)."""

    heard: tuple[tuple[float, float, str], ...]  # transcript segments (start, end, text)
    frames: tuple[tuple[float, Path], ...]  # screenshots and keyframes, in time order
    typed: tuple[tuple[float, str], ...] = ()  # what the watcher typed, from when it began to
    # (step time, its element list's strings one a line), a step each, in modes with elements
    listed: tuple[tuple[float, str], ...] = ()
    # (solution step, when the screen its action returned came back), for each step played
    acted: tuple[tuple[int, float], ...] = ()
    keyframes: int = 0  # keyframes the steps returned
    asr_calls: int = 0  # Whisper calls the transcript channel made (audio modes)
    ended: float = math.inf  # when the episode's last step came back
    result: str = ""  # how the episode ended (its getTaskResult), where the trace says

    def typed_at(self, key: str) -> float:
        """When the watcher began typing ``key`` itself (infinity if it never did).

        From then on the key is on screen because the watcher put it there (a typed answer),
        so frames taken after that moment do not show it for the page.
        """
        return min((t for t, text in self.typed if puts_on_screen(key, text)), default=math.inf)

    def heard_text(self, start: float, end: float) -> str:
        """What was heard between ``start`` and ``end``."""
        return "\n".join(t for a, b, t in self.heard if b >= start and a <= end)

    def screen_text(self, start: float, end: float) -> str:
        """What OCR reads in the frames taken between ``start`` and ``end``."""
        return "\n".join(ocr(path) for t, path in self.frames if start <= t <= end)

    def shows(
        self,
        keys: Iterable[str],
        start: float,
        end: float,
        every: bool = False,
        *,
        screens: bool = True,
        lists: bool = False,
    ) -> bool:
        """Whether what was shown from ``start`` to ``end`` holds half the keys (``every``: all).

        What was shown: the frames read by OCR (``screens``) and the element lists (``lists``);
        with both, a key counts found in either. A key the watcher typed itself counts only in
        what was taken before it began typing.
        """
        keys = list(keys)
        texts = [(t, ocr(path)) for t, path in self.frames if start <= t <= end] if screens else []
        if lists:
            texts += [(t, text) for t, text in self.listed if start <= t <= end]
        return enough(self._found(keys, texts), len(keys), every)

    def _found(self, keys: list[str], texts: list[tuple[float, str]]) -> int:
        """How many ``keys`` the (time, OCR text) frames hold, each before the watcher typed it."""
        before: dict[float, str] = {}  # the frames' text before each moment something was typed
        found = 0
        for key in keys:
            typed = self.typed_at(key)
            if typed not in before:
                before[typed] = "\n".join(text for t, text in texts if t < typed)
            found += key_found(key, before[typed])
        return found

    def chance(
        self,
        keys: Iterable[str],
        start: float,
        end: float,
        step_s: float,
        every: bool = False,
        follows: int | None = None,
        lists: bool = False,
    ) -> float:
        """The share of screenshot-only agents stepping about every ``step_s`` s that see ``keys``.

        The frames are taken as the page's timeline (the screen stays as the last frame showed
        it until the next). Each agent steps every ``s`` seconds, ``s`` one of ``STEP_SPREAD``
        times ``step_s``: it looks at 0 (the first frame: the screen ``reset`` returned) and
        then at ``phase + k * s``, for ``PHASES`` phases. An item that ``follows`` a step of the
        solution, the agent's own action, is looked at in the screen that action returned and
        ``k * s`` after it: the phase is the action's (as the watcher played it). There are no
        looks after the last frame: the episode is over. An agent sees the item when the screens
        it looked at between ``start`` and ``end`` hold half the keys (all of them if
        ``every``); a key the watcher typed counts only before it did.

        With ``lists`` the agents also read the element list (standard_structured's): a look
        whose screen is a step's screenshot reads that step's list beside it. A look whose screen
        is a keyframe reads none, since the screen has changed since the list was read (a
        keyframe is taken only when the screen changes), so this is the list agents' chance as
        far as the trace knows it: at least the screenshot-only one.
        """
        keys = list(keys)
        times = [t for t, _ in self.frames]
        if not keys or not times:
            return 0.0
        listed = dict(self.listed) if lists else {}
        acted = dict(self.acted).get(follows) if follows is not None else None
        if acted is None:
            agents = [(f * step_s, (i + 0.5) / PHASES) for f in STEP_SPREAD for i in range(PHASES)]
        else:
            agents = [(f * step_s, 0.0) for f in STEP_SPREAD]
        hits = 0
        for step, phase in agents:
            if acted is None:
                # Before the first frame, the agent sees the first: the screen reset returned.
                looks = [times[0]] + [(phase + k) * step for k in range(int(end // step) + 2)]
            else:
                looks = [acted + k * step for k in range(int((end - acted) // step) + 2)]
            shown = {
                bisect.bisect_right(times, t) - 1
                for t in looks
                if start <= t <= end and t <= times[-1]
            }
            texts = [self._screen(self.frames[j], listed) for j in sorted(shown - {-1})]
            hits += enough(self._found(keys, texts), len(keys), every)
        return hits / len(agents)

    @staticmethod
    def _screen(frame: tuple[float, Path], listed: dict[float, str]) -> tuple[float, str]:
        """A frame's time and text: OCR's, and the list read with it, if it is a step's."""
        t, path = frame
        return t, "\n".join([ocr(path), *([listed[t]] if t in listed else [])])


ELEMENTS_HEADING = "[PAGE ELEMENTS"  # the section's heading begins so, with details or without
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')  # a string of the list, with \" and \\ escaped
_ESCAPED = re.compile(r"\\(.)")


def element_list_text(record: str) -> str | None:
    """The text of a record's ``[PAGE ELEMENTS]`` section; None where it has none.

    That is every quoted string of it (an element's text, ``label=`` and ``value=``), unescaped,
    one a line: what the agent reads there, less roles, boxes and states. The section runs to
    the next line that begins with ``[``; its lines are indented, and the "(3 more on screen,
    not listed)" line quotes nothing.
    """
    lines = record.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(ELEMENTS_HEADING)), None)
    if start is None:
        return None
    strings = []
    for line in lines[start + 1 :]:
        if line.startswith("["):
            break
        strings += [_ESCAPED.sub(r"\1", m.group(1)) for m in _QUOTED.finditer(line)]
    return "\n".join(strings)


def read_trace(folder: Path) -> Observed:
    """The transcript segments, images and element lists of a saved trace."""
    heard: dict[tuple[float, str], tuple[float, float, str]] = {}
    frames: list[tuple[float, Path]] = []
    listed: list[tuple[float, str]] = []
    typed: list[tuple[float, str]] = []
    acted: list[tuple[int, float]] = []
    asr_calls = 0
    lines = (folder / TRACE_FILE).read_text(encoding="utf-8").splitlines()
    began = 0.0  # when the step's action began: the previous step's end
    for raw in lines:
        line = json.loads(raw)
        action = line.get("action") or {}
        if action.get("type") == "type":
            typed.append((began, str(action.get("text", ""))))
        step = (line.get("agent") or {}).get("solution_step")
        if step is not None:
            acted.append((int(step), float(line["elapsed"])))  # the screen it returned
        began = float(line["elapsed"])
        asr_calls += int(line.get("asr_calls", 0))
        name = f"{line['step']:04d}"
        record = (folder / "records" / f"{name}.txt").read_text(encoding="utf-8")
        for m in _HEARD.finditer(record):
            a, b, said = float(m.group(1)), float(m.group(2)), m.group(3)
            heard[(round(a), said)] = (a, b, said)  # each step repeats recent segments
        elements = element_list_text(record)
        if elements is not None:
            listed.append((float(line["elapsed"]), elements))  # read with the screenshot
        frames.append((float(line["elapsed"]), folder / "screens" / f"{name}.png"))
        for k, t in enumerate(line.get("keyframe_times", [])):
            frames.append((float(t), folder / "keyframes" / f"{name}-{k + 1}.png"))
    keyframes = len(frames) - len(lines)  # one screenshot a step; the rest are keyframes
    episode = folder / OUTCOME_FILE
    result = json.loads(episode.read_text(encoding="utf-8")) if episode.is_file() else {}
    return Observed(
        tuple(sorted(heard.values())),
        tuple(sorted(frames)),
        typed=tuple(typed),
        listed=tuple(listed),
        acted=tuple(acted),
        keyframes=keyframes,
        asr_calls=asr_calls,
        ended=began if lines else math.inf,
        result=str(result.get("result", "")),
    )
