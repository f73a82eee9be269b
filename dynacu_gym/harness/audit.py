"""The validity audit: is every task solvable, unguessable, and in need of the channel it claims?

``dynacu audit`` runs, for each task:

1. **solvable**: the scripted solution (the oracle) in aoi_interactive, over ``seeds`` seeds;
   every episode must succeed.
2. **unguessable**: the null agent (standard), the random agent (its own actions on every
   task, drawn from the episode's seed) and the near-miss agent (the scripted solution
   answering with the task's first near misses), both in aoi_interactive; no episode may
   succeed.
3. **perceivable**: a watcher in each of the six modes, with its whole trace saved. The
   watcher plays the scripted solution (so what appears only after a click, or after Space
   starts a game, is there to be seen) and otherwise looks at the page every ``step_s``
   seconds, as an agent that thinks between steps. Each evidence item's ``keys`` (see
   :class:`dynacu_gym.tasks.Evidence`) are looked for in what that mode let it perceive: the
   Whisper transcript in the audio modes, the screenshots and keyframes read by OCR
   (tesseract), and in the modes with the ``elements`` channel the page's element list of each
   step (its quoted text, labels and values; see :func:`element_list_text`). An item is
   *seen* when at least half its keys are found, or all of them for an item whose every piece
   the agent needs (``all_keys``: five prices to find the cheapest). A key of three words or
   more is also found where OCR split it over a wrapped line with the next column's lines in
   between, and a lone bar counts as a capital I (see :func:`key_found`).

   One more watcher, the **timeline**, records everything the page showed: aoi_visual (with
   its element list each step) looking every 5 s with K = 16, so no keyframe is ever dropped
   (5 s at 3 frames a second is 15 frames), and playing the solution but its answer, so the
   page runs on to its end (what comes round again later is seen). From it the audit
   computes, for each visual item, its *chance*: the share of screenshot-only agents stepping
   about every ``step_s`` seconds (0.8 to 1.2 times it, at every phase of their steps) that
   see it. The standard watcher is one such agent; the chance is all of them.

   The benchmark's premise holds for an item when

   - **audio**: it is heard in every audio mode, inside its window (in every one that speaks,
     for a line the page says only after a spoken answer: its ``follows`` step speaks); it
     is never readable on the page (not in the timeline, so not in any mode's screenshots);
     and it is never in an element list, in any mode that has them, at any time of the
     episode (half its keys there is already a leak);
   - **transient visual**: it is seen in every keyframe mode inside its window, a
     screenshot-only agent catches it at most half the time (chance <= 0.5), and so does one
     that also reads the element list (standard_structured's chance, see below), and it is
     gone from the page (its screenshots and its element lists) after its window;
   - **lasting visual**: it is seen in every mode, and every screenshot-only agent sees it
     (chance at least 0.9: OCR misreads a frame now and then);
   - and in the timeline, every visual item is on screen inside its window (else its keys or
     window are wrong, or OCR cannot read it).

   What the watcher typed itself (the solution's answer, in an input) is not the page's: a key
   counts on screen only in the frames (and element lists) taken before the watcher began
   typing it.

   **The element list.** An agent with the list perceives both it and the screenshot, so in a
   mode with elements an item is seen when OCR or the lists hold its keys, and each of its rows
   says (``listed``) whether the lists alone held them: for audio, anywhere in the episode; for
   visual items, inside the window. The list is read in the same instant as the step's
   screenshot and holds only what is rendered on screen then, so being listed is judged as
   standard's screenshots are, by chance: standard_structured (a screenshot-only agent with the
   list) gets the chance bound for transient items too, taken over the timeline's frames with
   each step screenshot's list beside it (:meth:`Observed.chance` with ``lists``). Its watcher
   catching a transient item once is no fault, as it is none for standard's. Lasting items get
   no second bound there: the lists only add to what the screenshots show, and standard
   already checks that every screenshot-only agent sees them.
4. **silent** (static controls, category S): nothing on the page moves or plays, so in every
   mode the watcher's steps return no keyframe and the transcript channel never calls
   Whisper. For the same reason the null agent and the timeline stop waiting on a static page
   at its ``duration_s``, not at its time limit (minutes, for an agent to fill a form).

Episodes go through the evaluation runner, one folder a check under ``OUT`` (each with its
``episodes.jsonl``), so a stopped audit resumes where it stopped. A task whose files (its
folder and its app's) changed since its episodes ran is run again. OCR text is cached next to
each image. The fingerprint includes the modes and their channels, so a change of what the
modes observe runs every task again. The verdicts go to ``OUT/audit.jsonl`` (one line per
task, check, mode and item) and ``OUT/audit.md`` (the summary, the table and every failure
with its reason). Each row keeps its task's :func:`task_hash`, so audits run in parts merge
into one (:func:`merge_audits`) that names the tasks changed since they were judged.

An audit may run some of the checks and, for the evidence and silent checks, some of the modes
(``checks``, ``modes``; ``dynacu audit --checks evidence,silent --modes standard_structured``):
a mode that gains a channel is judged again without the hours of the rest. Merged after a whole
audit, its rows replace those of the same task, check and mode, and leave the others.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynacu_gym.answers import (
    _ORDINAL_WORDS,
    _SCALES,
    _TENS,
    _UNITS,
    _base,
    mentions,
    normalize,
)
from dynacu_gym.errors import AuditError
from dynacu_gym.harness.runner import (
    EPISODES_FILE,
    AgentSpec,
    EpisodeSpec,
    episode_seed,
    evaluate,
    read_lines,
    trace_dir,
)
from dynacu_gym.harness.trace import OUTCOME_FILE, TRACE_FILE
from dynacu_gym.modes import MODE_CHANNELS, MODES, check_mode, mode_channels
from dynacu_gym.paths import tasks_root
from dynacu_gym.tasks import Evidence, TaskSpec, catalogue_order, find_task, task_folders

AUDIO_MODES = tuple(m for m in MODES if "transcript" in MODE_CHANNELS[m])
KEYFRAME_MODES = tuple(m for m in MODES if "keyframes" in MODE_CHANNELS[m])
STANDARD = "standard"  # the screenshot-only agent the chance is the share of
STRUCTURED = "standard_structured"  # the same agent with the element list
STEP_S = 10.0  # an LLM agent's step: a screenshot to a hosted model and back, and a short wait
SLACK_S = (1.0, 3.0)  # seconds before and after an evidence window that still count
TRANSIENT_CHANCE = 0.5  # transient: a screenshot-only agent catches it at most this often
LASTING_CHANCE = 0.9  # lasting: every one does (less a margin: OCR misreads a frame now and then)
# The screenshot-only agents the chance is taken over: steps of 0.8 to 1.2 times the step (an
# agent's pace varies, and a page that loops every 20 s must not look different to one stepping
# every 10 s exactly), each at PHASES phases.
STEP_SPREAD = (0.8, 0.9, 1.0, 1.1, 1.2)
PHASES = 8
TIMELINE = "timeline"
TIMELINE_MODE = "aoi_visual"
TIMELINE_STEP_S = 5.0
TIMELINE_ENV = {"max_keyframes": 16}  # 5 s at 3 frames a second fits: nothing is dropped
CHECKS = ("solvable", "null", "random", "nearmiss", "evidence", "silent")

_TRAILING_PUNCT = re.compile(r"(?<=\w)[,;:.!?)\]]+(?=\s|$)")
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.I)
_BAR_FOR_I = re.compile(r"(?<!\S)\|(?!\S)")  # OCR reads a capital I alone as a bar
WRAP_LINES = 8  # how far below a wrapped line its rest may come (OCR interleaves columns)
WRAP_WORDS = 3  # a key found wrapped has at least this many words: two are too easily met
# A transcript line in a record: (12.3s–15.0s) "what was said"
_HEARD = re.compile(r"^\((\d+(?:\.\d+)?)s–(\d+(?:\.\d+)?)s\) \"(.*)\"", re.M)


def key_found(key: str, text: str) -> bool:
    """Whether ``text`` (a transcript or OCR text) says ``key``.

    Numbers and times are normalised: "sixty" finds 60, "$4,800" finds 4800, "3:30" finds
    "3.30", and a key that spells a number finds it in digits too ("press four" finds "press
    4", "twenty-sixth" finds "26th"). Other keys are whole words, case and punctuation aside.
    """
    if any(ch.isdigit() for ch in key):
        # "$95, not" and "April 28th": a number ends at a comma or an ordinal's suffix.
        said = _ORDINAL.sub(r"\1", _TRAILING_PUNCT.sub(" ", text))
        if re.fullmatch(r"\d{4,}", key) and mentions("digits", [key], said, len(key) + 2):
            return True  # a code read out digit by digit: "5-8-2-0" or "five, eight, two, zero"
        kind = "time" if ":" in key else "number"
        if normalize(kind, key) is not None:
            return mentions(kind, [key], said, max_words=len(key.split()) + 5)
    else:
        spelled = _in_digits(key)
        if spelled is not None and key_found(spelled, text):
            return True
    wanted = normalize("text", key)
    if not wanted:
        return False
    text = _BAR_FOR_I.sub("I", text)
    if re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", normalize("text", text) or ""):
        return True
    return len(wanted.split()) >= WRAP_WORDS and _wrapped(wanted.split(), text)


def _wrapped(words: list[str], text: str) -> bool:
    """Whether ``words`` run over a line's end in OCR text, with other lines in between.

    One line ends with their start and one of the next ``WRAP_LINES`` starts with the rest. Text
    that wraps in a narrow card comes out of OCR split, often with lines of the column
    beside it in between ("last booking 9:30", "Date *", "pm)").
    """
    lines = [line.split() for line in (normalize("text", ln) for ln in text.splitlines()) if line]
    for i, line in enumerate(lines):
        for cut in range(1, len(words)):
            head, rest = words[:cut], words[cut:]
            if line[-cut:] != head:
                continue
            if any(below[: len(rest)] == rest for below in lines[i + 1 : i + 1 + WRAP_LINES]):
                return True
    return False


_NUMBER_WORDS = {*_UNITS, *_TENS, *_SCALES, "hundred"}
_CARDINALS = {v: k for k, v in {**_UNITS, **_TENS}.items() if k != "oh"}


def _in_digits(key: str) -> str | None:
    """``key`` with each run of number words in digits ("under twenty": "under 20"), or None.

    A run may end in an ordinal ("twenty sixth": "26"); None when the key spells no number.
    """
    words = _base(key).replace("-", " ").split()
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        out.append(normalize("number", " ".join(run)) or " ".join(run))
        run.clear()

    for word in words:
        if word in _ORDINAL_WORDS and not (run and run[-1] in _ORDINAL_WORDS):
            word = _CARDINALS.get(_ORDINAL_WORDS[word], word)
        if word in _NUMBER_WORDS or (word == "and" and run):
            run.append(word)
            continue
        if run:
            flush()
        out.append(word)
    if run:
        flush()
    spelled = " ".join(w for w in out if w)
    return spelled if spelled != " ".join(words) else None


def seen(keys: Iterable[str], text: str, every: bool = False) -> bool:
    """At least half the keys (all of them if ``every``), and at least one, are in ``text``."""
    keys = list(keys)
    if not keys:
        return False
    return _enough(sum(key_found(k, text) for k in keys), len(keys), every)


def _typed(key: str, text: str) -> bool:
    """Whether typing ``text`` puts ``key`` on screen ("tangerine" in "tangerine7" too)."""
    wanted = normalize("text", key)
    return key_found(key, text) or bool(wanted and wanted in (normalize("text", text) or ""))


def _enough(found: int, wanted: int, every: bool) -> bool:
    return wanted > 0 and (found == wanted if every else 2 * found >= wanted)


def tesseract() -> str:
    """The tesseract executable.

    Raises:
        AuditError: tesseract is not installed.
    """
    path = shutil.which("tesseract")
    if path is None:
        raise AuditError(
            "the audit reads screenshots with tesseract, which is not installed; "
            "install the tesseract-ocr system package (make setup does)"
        )
    return path


# Tesseract misreads small UI text differently at each size (a 14 px caption light on dark
# only enlarged, a chart's "5.7" only at screen size), so every frame is read at both.
OCR_SCALES = (1, 2)


def _ocr_cache(image: Path, scale: int) -> Path:
    return (
        image.with_suffix(".txt") if scale == 1 else image.with_name(f"{image.stem}.ocr{scale}.txt")
    )


def ocr(image: Path) -> str:
    """The text tesseract reads in ``image``, at each of ``OCR_SCALES`` (cached next to it).

    At screen size tesseract read a 14 px caption on a podcast's artwork as "Priya’: oint 3
    Fairer for low income:", and whole at twice the size; a bar chart's "5.7" the other way
    round ("57" enlarged).

    Raises:
        AuditError: tesseract or ffmpeg is not installed.
    """
    return "\n".join(_ocr_at(image, scale) for scale in OCR_SCALES)


def _ocr_at(image: Path, scale: int) -> str:
    cache = _ocr_cache(image, scale)
    if cache.is_file():
        return cache.read_text(encoding="utf-8")
    source: str | Path = image
    enlarged = None
    if scale != 1:  # enlarged in grey by ffmpeg, handed over on stdin
        ffmpeg = shutil.which("ffmpeg")
        if ffmpeg is None:
            raise AuditError("the audit enlarges screenshots with ffmpeg, which is not installed")
        filters = f"scale=iw*{scale}:ih*{scale}:flags=lanczos,format=gray"
        enlarged = subprocess.run(
            [ffmpeg, "-loglevel", "error", "-i", str(image), "-vf", filters]
            + ["-f", "image2pipe", "-c:v", "pgm", "-"],
            capture_output=True,
            check=True,
            timeout=120,
        ).stdout
        source = "stdin"
    # psm 11: sparse text, as a page's scattered labels, cells and buttons are. One thread
    # each: the audit runs several at once.
    text = subprocess.run(
        [tesseract(), str(source), "-", "--psm", "11"],
        input=enlarged,
        capture_output=True,
        check=True,
        timeout=120,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"},
    ).stdout.decode("utf-8", "replace")
    cache.write_text(text, encoding="utf-8")
    return text


def ocr_all(images: Iterable[Path], workers: int) -> None:
    """Read ``images`` ahead, ``workers`` at a time, into their caches.

    An image identical to another (the same screen in two modes, a page that did not change
    between two steps: a third of a category's frames) is read once; its copies get its text.
    """
    images = list(images)
    if all(_is_read(image) for image in images):
        return  # a resumed judgement: nothing to hash
    read: dict[str, Path] = {}  # image content -> the image whose text stands for it
    copies: list[tuple[Path, str]] = []
    for image in images:
        digest = hashlib.sha256(image.read_bytes()).hexdigest()
        cached = _is_read(image)
        if digest not in read or (cached and not _is_read(read[digest])):
            read[digest] = image
        if not cached:
            copies.append((image, digest))
    with ThreadPoolExecutor(max(1, workers)) as pool:
        list(pool.map(ocr, [p for p in read.values() if not _is_read(p)]))
    for image, digest in copies:
        if image != read[digest]:
            for scale in OCR_SCALES:
                text = _ocr_cache(read[digest], scale).read_text(encoding="utf-8")
                _ocr_cache(image, scale).write_text(text, encoding="utf-8")


def _is_read(image: Path) -> bool:
    return all(_ocr_cache(image, s).is_file() for s in OCR_SCALES)


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
        return min((t for t, text in self.typed if _typed(key, text)), default=math.inf)

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
        return _enough(self._found(keys, texts), len(keys), every)

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
            hits += _enough(self._found(keys, texts), len(keys), every)
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


def judge_silent(task: TaskSpec, observed: dict[str, Observed]) -> list[dict[str, Any]]:
    """A static control (category S): no keyframes and no Whisper calls, in every mode.

    Nothing on the page moves or plays, so the keyframe and audio channels must stay silent;
    what the agent's own actions change is in each step's screenshot.
    """
    rows = []
    for mode, obs in observed.items():
        problems = []
        if obs.keyframes:
            problems.append(f"{obs.keyframes} keyframes on a static page")
        if obs.asr_calls:
            problems.append(f"{obs.asr_calls} Whisper calls on a page that plays nothing")
        if obs.heard:
            problems.append(f"heard {obs.heard_text(0.0, math.inf)!r} on a silent page")
        rows.append(
            {
                "task": task.id,
                "check": "silent",
                "mode": mode,
                "keyframes": obs.keyframes,
                "asr_calls": obs.asr_calls,
                "ok": not problems,
                "reason": "; ".join(problems),
            }
        )
    return rows


def judge_evidence(
    task: TaskSpec,
    observed: dict[str, Observed],
    timeline: Observed | None,
    step_s: float = STEP_S,
) -> list[dict[str, Any]]:
    """One row per evidence item and mode, and one for the timeline.

    Each row says whether the item was seen, and whether the premise wants that (see the
    module's docstring).
    """
    rows = []
    for number, item in enumerate(task.evidence, start=1):
        if item.channel == "visual" and not item.keys:
            # Not text (a highlight, a mole, a falling fruit): OCR cannot look for it.
            unread = {"check": "unread", "mode": "", "seen": None, "ok": True, "reason": ""}
            rows.append({**_item_fields(task, number, item), **unread})
            continue
        after_speech = item.follows is not None and task.solution[item.follows - 1].speaks
        verdicts = [(TIMELINE, *_judge_timeline(item, timeline))]
        verdicts += [
            (m, *_judge_mode(item, m, o, timeline, step_s, after_speech))
            for m, o in observed.items()
        ]
        for mode, found, problems, extra in verdicts:
            if not item.keys:
                problems = ["no keys to listen for: give the audio evidence item keys"]
            rows.append(
                {
                    **_item_fields(task, number, item),
                    "mode": mode,
                    "seen": found,
                    **extra,
                    "ok": not problems,
                    "reason": "; ".join(problems),
                }
            )
    return rows


def _frames_to_read(
    task: TaskSpec, observed: dict[str, Observed], timeline: Observed | None
) -> list[Path]:
    """The frames the judges read, to OCR ahead; the rest is never read.

    Those in the windows of visual items with keys; in the timeline also the frame on screen
    when a window opens (the chance reads it), all after a transient item's window, and all of
    it when spoken keys must not be on the page. A dashboard whose items are charts (no keys)
    has most of its keyframes left unread.
    """
    windows, after, everything = [], math.inf, False
    for item in task.evidence:
        if item.keys and item.channel == "audio":
            everything = True
        elif item.keys:
            windows.append(_window(item))
            if item.transient:
                after = min(after, windows[-1][1])

    def inside(t: float) -> bool:
        return any(lo <= t <= hi for lo, hi in windows)

    paths = [p for o in observed.values() for t, p in o.frames if inside(t)]
    if timeline is not None:
        times = [t for t, _ in timeline.frames]
        opening = {bisect.bisect_right(times, lo) - 1 for lo, _ in windows} - {-1}
        paths += [
            p
            for k, (t, p) in enumerate(timeline.frames)
            if everything or t >= after or inside(t) or k in opening
        ]
    return paths


def _item_fields(task: TaskSpec, number: int, item: Evidence) -> dict[str, Any]:
    return {
        "task": task.id,
        "check": "evidence",
        "evidence": number,
        "channel": item.channel,
        "transient": item.transient,
        "keys": list(item.keys),
        "fact": item.fact,
    }


Verdict = tuple[bool, list[str], dict[str, Any]]  # seen, what is wrong, more fields


def _window(item: Evidence) -> tuple[float, float]:
    return item.window[0] - SLACK_S[0], item.window[1] + SLACK_S[1]


def has_lists(mode: str) -> bool:
    """Whether ``mode``'s agent reads the page's element list (the timeline: its mode's)."""
    try:
        return "elements" in mode_channels(TIMELINE_MODE if mode == TIMELINE else mode)
    except ValueError:
        return False  # a row of a mode this version does not know


def _spoken_listed(item: Evidence, mode: str, obs: Observed) -> tuple[list[str], dict[str, Any]]:
    """An audio item in a mode with element lists: never in any of them, all episode long.

    Like the timeline's "readable on the page", half its keys listed at any time is a leak.
    """
    if not has_lists(mode):
        return [], {}
    listed = obs.shows(item.keys, 0.0, math.inf, screens=False, lists=True)
    return ["spoken evidence is listed in the page elements"] if listed else [], {"listed": listed}


def _judge_timeline(item: Evidence, timeline: Observed | None) -> Verdict:
    """Audio: never on the page. Visual: on screen in its window; transient: gone after it.

    The timeline runs in a mode with element lists: an audio item must not be listed either,
    a visual item counts on screen where OCR or the lists hold it, and a transient one must be
    gone from both after its window.
    """
    if timeline is None:
        return False, ["no timeline run"], {}
    lo, hi = _window(item)
    lists = has_lists(TIMELINE)
    if item.channel == "audio":
        # Half the pieces on the page is already a leak, whatever the item needs.
        shown = timeline.shows(item.keys, 0.0, math.inf)
        leaks, listed = _spoken_listed(item, TIMELINE, timeline)
        problems = ["spoken evidence is readable on the page"] if shown else []
        return shown, problems + leaks, listed
    shown = timeline.shows(item.keys, lo, hi, item.all_keys, lists=lists)
    fields: dict[str, Any] = {}
    if lists:
        fields["listed"] = timeline.shows(
            item.keys, lo, hi, item.all_keys, screens=False, lists=True
        )
    problems = []
    if not shown:
        problems.append(
            "not on screen in its window even in the timeline: check its keys and window, "
            "or the text is too small for OCR"
        )
    if item.transient and timeline.shows(item.keys, hi, math.inf, item.all_keys):
        problems.append("still on screen after its window: it is not transient")
    elif (
        item.transient
        and lists
        and timeline.shows(item.keys, hi, math.inf, item.all_keys, screens=False, lists=True)
    ):
        problems.append("still listed in the page elements after its window: it is not transient")
    return shown, problems, fields


def _judge_mode(
    item: Evidence,
    mode: str,
    obs: Observed,
    timeline: Observed | None,
    step_s: float,
    after_speech: bool = False,
) -> Verdict:
    """Audio: heard in the audio modes. Visual: seen where the premise wants it.

    An audio item played only ``after_speech`` (it follows a spoken step) is wanted only in
    the modes that speak: elsewhere the page never plays it; and in a mode with element lists
    it is in none of them. In standard, a visual item is also judged by its chance (see
    :meth:`Observed.chance`); in standard_structured a transient one by its chance with the
    lists (see the module's docstring). In a mode with lists, a visual item is seen where OCR
    or the lists hold it, and ``listed`` says whether the lists alone did.
    """
    lo, hi = _window(item)
    if item.channel == "audio":
        found = seen(item.keys, obs.heard_text(lo, hi), item.all_keys)
        wanted = mode in AUDIO_MODES and (not after_speech or "speech" in MODE_CHANNELS[mode])
        missing = wanted and not found
        problems = ["audio evidence not heard in its window", *_cut_short(item, obs)]
        leaks, listed = _spoken_listed(item, mode, obs)
        return found, (problems if missing else []) + leaks, listed
    lists = has_lists(mode)
    found = obs.shows(item.keys, lo, hi, item.all_keys, lists=lists)
    extra: dict[str, Any] = {}
    if lists:
        extra["listed"] = obs.shows(item.keys, lo, hi, item.all_keys, screens=False, lists=True)
    kind = "transient" if item.transient else "lasting"
    problems = []
    if (not item.transient or mode in KEYFRAME_MODES) and not found:
        problems += [f"{kind} visual evidence not seen", *_cut_short(item, obs)]
    if mode not in (STANDARD, STRUCTURED) or timeline is None:
        return found, problems, extra
    chance = timeline.chance(item.keys, lo, hi, step_s, item.all_keys, item.follows, lists)
    extra["chance"] = chance
    agent = "a screenshot-only agent" + (" with the element list" if lists else "")
    if item.transient and chance > TRANSIENT_CHANCE:
        problems.append(
            f"{agent} stepping about every {step_s:g} s sees it {chance:.0%} of "
            "the time: show it for less time, or call it lasting"
        )
    if mode == STANDARD and not item.transient and chance < LASTING_CHANCE:
        problems.append(
            f"{agent} stepping about every {step_s:g} s sees it only "
            f"{chance:.0%} of the time: call it transient, or show it for longer"
        )
    return found, problems, extra


def _cut_short(item: Evidence, obs: Observed) -> list[str]:
    """Why an item was missed, where the watched episode ended before its window opened.

    Then the page never played or showed it (a game the watcher lost, say): the episode, not
    the channel, missed it.
    """
    if obs.ended >= item.window[0]:
        return []
    how = f" ({obs.result})" if obs.result else ""
    return [f"the episode ended{how} at {obs.ended:.1f} s, before the item's window opened"]


def fingerprint(task: TaskSpec) -> str:
    """A hash of what the task's episodes depend on.

    That is the task less its evidence (which only the audit reads) and where it lies, its
    other files, its app's, the page runtime shared by every app (``tasks/_shared/`` but
    the other apps), and the modes the audit runs with their channels and the timeline's
    (episodes watched before a mode gained a channel, the element list, lack what it shows).
    """
    modes = {m: MODE_CHANNELS[m] for m in MODES}, TIMELINE_MODE
    task_part = repr(dataclasses.replace(task, evidence=(), root=Path()))
    digest = hashlib.sha256((task_part + repr(modes)).encode())
    shared = tasks_root() / "_shared"
    parts = [
        (task.root, [p for p in task.root.rglob("*") if p.name != "task.toml"]),
        (shared, [p for p in shared.rglob("*") if p.relative_to(shared).parts[0] != "apps"]),
    ]
    if task.app:
        parts.append((shared, list((shared / "apps" / task.app).rglob("*"))))
    for root, paths in parts:
        for path in sorted(p for p in paths if p.is_file()):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def task_hash(task: TaskSpec) -> str:
    """A hash of all the audit's verdicts on the task depend on: its episodes and its evidence."""
    return hashlib.sha256((fingerprint(task) + repr(task.evidence)).encode()).hexdigest()[:16]


def forget_changed(out: Path, tasks: list[str]) -> list[str]:
    """Drop the episodes and traces of tasks whose files changed since they ran.

    Returns the ids dropped. ``out/fingerprints.json`` keeps what each task's episodes ran on.
    """
    path = out / "fingerprints.json"
    known = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    now = {t: fingerprint(find_task(t)) for t in tasks}
    changed = [t for t in tasks if t in known and known[t] != now[t]]
    if changed:
        for episodes in out.glob(f"*/{EPISODES_FILE}"):
            kept = [line for line in read_lines(episodes) if line["task"] not in changed]
            episodes.write_text("".join(json.dumps(line) + "\n" for line in kept), "utf-8")
        for trace in out.glob("*/traces/*"):
            if trace.name.split("-", 1)[0] in changed:
                shutil.rmtree(trace)
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**known, **now}, indent=1, sort_keys=True), encoding="utf-8")
    return changed


def check_audit_scope(checks: Iterable[str], modes: Iterable[str]) -> tuple[list[str], list[str]]:
    """The checks and perceive modes an audit runs, in their canonical order.

    Raises:
        ValueError: an unknown check or mode, a mode the audit does not watch, or none.
    """
    checks, modes = list(checks), [check_mode(m) for m in modes]
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        expected = ", ".join(CHECKS)
        raise ValueError(f"unknown audit check {unknown[0]!r}; expected some of {expected}")
    others = [m for m in modes if m not in MODES]
    if others:
        raise ValueError(
            f"the audit watches the preset modes, not {others[0]!r}; expected some of "
            + ", ".join(MODES)
        )
    if not checks:
        raise ValueError(f"expected at least one audit check of {', '.join(CHECKS)}")
    if not modes and ("evidence" in checks or "silent" in checks):
        raise ValueError("the evidence and silent checks watch in modes: expected at least one")
    return [c for c in CHECKS if c in checks], [m for m in MODES if m in modes]


def run_audit(
    tasks: list[str],
    out: Path,
    seeds: int = 3,
    workers: int = 2,
    step_s: float = STEP_S,
    base_seed: int = 0,
    checks: Iterable[str] = CHECKS,
    modes: Iterable[str] = MODES,
) -> list[dict[str, Any]]:
    """Run ``checks`` on ``tasks`` and return the rows.

    The evidence and silent checks watch in ``modes`` (the evidence check's timeline runs
    whatever they are). A part of the checks or modes makes a partial audit, whose rows
    replace those of the same task, check and mode when merged over a whole one
    (:func:`merge_audits`): one mode judged again, say, when it gains a channel.

    Resumes what ``out`` already holds; writes ``audit.jsonl`` and ``audit.md`` there.
    """
    if seeds < 1:
        raise ValueError(f"expected seeds >= 1, got {seeds}")
    if step_s <= 0:
        raise ValueError(f"expected step_s > 0, got {step_s}")
    checks, modes = check_audit_scope(checks, modes)
    tesseract()  # a missing OCR fails here, before any episode runs
    specs = [find_task(t) for t in tasks]
    forget_changed(out, tasks)
    rows: list[dict[str, Any]] = []
    runs = [
        ("solvable", AgentSpec("oracle"), ["aoi_interactive"], seeds, True),
        (
            "random",
            AgentSpec("random", {"seed": base_seed, "can_speak": True}),
            ["aoi_interactive"],
            1,
            False,
        ),
    ]
    for check, agent, run_modes, repeats, should_succeed in runs:
        if check not in checks:
            continue
        lines = evaluate(agent, tasks, run_modes, out / check, repeats, workers, base_seed)
        rows += [_episode_row(check, line, should_succeed) for line in lines]
    for group, options in _waiting_groups(specs) if "null" in checks else []:
        lines = evaluate(
            AgentSpec("null"),
            group,
            ["standard"],
            out / "null",
            1,
            workers,
            base_seed,
            env_options=options,
        )
        rows += [_episode_row("null", line, False) for line in lines]
    answered = [t.id for t in specs if t.answers]
    if answered and "nearmiss" in checks:
        nearmiss = AgentSpec("nearmiss")
        lines = evaluate(
            nearmiss, answered, ["aoi_interactive"], out / "nearmiss", 1, workers, base_seed
        )
        rows += [_episode_row("nearmiss", line, False) for line in lines]
    watched = "evidence" in checks or "silent" in checks
    watcher = AgentSpec("watcher", {"look_s": step_s})
    if watched:
        evaluate(watcher, tasks, modes, out / "perceive", 1, workers, base_seed, traces=True)
    recorder = AgentSpec("watcher", {"look_s": TIMELINE_STEP_S, "finish": False})
    for group, options in _waiting_groups(specs) if "evidence" in checks else []:
        evaluate(
            recorder,
            group,
            [TIMELINE_MODE],
            out / TIMELINE,
            1,
            workers,
            base_seed,
            traces=True,
            env_options={**TIMELINE_ENV, **options},
        )

    def trace(folder: str, task: str, mode: str, agent: AgentSpec) -> Observed | None:
        spec = EpisodeSpec(task, mode, 0, episode_seed(task, 0, base_seed))
        path = trace_dir(out / folder, spec, agent)
        return read_trace(path) if (path / TRACE_FILE).is_file() else None

    for task in specs if watched else []:
        observed = {m: trace("perceive", task.id, m, watcher) for m in modes}
        present = {m: o for m, o in observed.items() if o is not None}
        if "evidence" in checks:
            timeline = trace(TIMELINE, task.id, TIMELINE_MODE, recorder)
            ocr_all(_frames_to_read(task, present, timeline), workers)
            rows += judge_evidence(task, present, timeline, step_s)
        if "silent" in checks and task.category == "S":
            rows += judge_silent(task, present)

    hashes = {task.id: task_hash(task) for task in specs}
    rows = [{**row, "task_hash": hashes[row["task"]]} for row in rows]
    write_audit(out, rows, tasks, step_s)
    return rows


def _waiting_groups(specs: list[TaskSpec]) -> list[tuple[list[str], dict[str, Any]]]:
    """The tasks in groups, each with the env options of the runs that wait for the page's end.

    The null agent and the timeline wait until the page calls time. A static control (category
    S) has nothing that moves or plays after it loads, so its wait ends at its ``duration_s``
    rather than its time limit (180 s, for an agent to fill a form): those minutes would show
    the same screen, and no timer of the page could end them otherwise.
    """
    dynamic = [t.id for t in specs if t.category != "S"]
    groups: list[tuple[list[str], dict[str, Any]]] = [(dynamic, {})] if dynamic else []
    static: dict[float, list[str]] = {}
    for task in specs:
        if task.category == "S":
            static.setdefault(task.duration_s, []).append(task.id)
    groups += [(ids, {"time_limit_s": limit}) for limit, ids in sorted(static.items())]
    return groups


def write_audit(
    out: Path,
    rows: list[dict[str, Any]],
    tasks: list[str],
    step_s: float = STEP_S,
    stale: Iterable[str] = (),
) -> None:
    """``out/audit.jsonl`` (the rows) and ``out/audit.md`` (:func:`render_summary`)."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "audit.jsonl").open("w", encoding="utf-8") as sink:
        for row in rows:
            sink.write(json.dumps(row) + "\n")
    summary = render_summary(rows, tasks, step_s, stale)
    (out / "audit.md").write_text(summary, encoding="utf-8")


def merge_audits(folders: list[Path]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The rows of audits run in parts (a category at a time, say), as one audit.

    A task's rows of one check in one mode (its solution's seeds, its evidence items as the
    standard watcher saw them, its timeline) come whole from the last folder that judged them,
    so a partial audit (some checks, some modes) given after a whole one replaces just those.
    Returns the rows, the tasks in catalogue order, and the *stale* tasks: those with a row
    judged before their files or evidence changed (:func:`task_hash`), which no longer stands.

    Raises:
        AuditError: a folder holds no ``audit.jsonl``, or names a task not in the catalogue.
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for folder in folders:
        path = folder / "audit.jsonl"
        if not path.is_file():
            raise AuditError(f"expected an audit in {folder}: it has no audit.jsonl")
        mine: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for row in read_lines(path):
            mine.setdefault((row["task"], row["check"], row["mode"]), []).append(row)
        groups.update(mine)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for (task, _, _), rows in groups.items():
        by_task.setdefault(task, []).extend(rows)
    catalogue = task_folders()
    unknown = sorted(set(by_task) - set(catalogue))
    if unknown:
        raise AuditError(f"the audits name tasks not in the catalogue: {', '.join(unknown)}")
    tasks = sorted(by_task, key=catalogue_order)
    hashes = {t: task_hash(find_task(t)) for t in tasks}  # each reads the task's and app's files
    stale = [t for t in tasks if any(r.get("task_hash") != hashes[t] for r in by_task[t])]
    checks = {c: k for k, c in enumerate(CHECKS)}
    modes = {m: k for k, m in enumerate((TIMELINE, *MODES))}

    def place(row: dict[str, Any]) -> tuple[int, int, int]:
        check = checks.get(row["check"], len(checks))
        return check, row.get("evidence", 0), modes.get(row["mode"], len(modes))

    for t in tasks:
        by_task[t].sort(key=place)  # stable: a mode's seeds stay in order
    return [r for t in tasks for r in by_task[t]], tasks, stale


def _episode_row(check: str, line: dict[str, Any], should_succeed: bool) -> dict[str, Any]:
    ok = bool(line["success"]) == should_succeed and not line.get("infra_error")
    reason = ""
    if line.get("infra_error"):
        reason = f"infrastructure fault: {line['infra_error']}"
    elif not ok:
        reason = (
            f"the scripted solution ended {line['result']!r}"
            if should_succeed
            else f"the {line['agent']} agent solved it"
        )
    return {
        "task": line["task"],
        "check": check,
        "mode": line["mode"],
        "repeat": line["repeat"],
        "seed": line["seed"],
        "result": line["result"],
        "ok": ok,
        "reason": reason,
    }


def _items(rows: list[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Evidence rows by item: (task, evidence number) -> its rows, in every mode."""
    items: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        items.setdefault((row["task"], row["evidence"]), []).append(row)
    return items


def _listed_headline(evidence: list[dict[str, Any]]) -> list[str]:
    """The headline's line on spoken evidence in the element lists (empty without lists).

    An item counts once, listed in any mode; only items judged with the lists count.
    """
    checked = [
        mine
        for mine in _items([r for r in evidence if r["channel"] == "audio"]).values()
        if any("listed" in r for r in mine)
    ]
    if not checked:
        return []
    listed = sum(any(r.get("listed") for r in mine) for mine in checked)
    return [
        f"- Audio evidence listed in page elements: {listed}/{len(checked)} (in any mode with "
        "the element list, at any time: must be none)"
    ]


def _recall_row(label: str, rows: list[dict[str, Any]], field: str, chance_mode: str) -> str:
    """A recall table row: per mode, how many ``rows`` hold ``field``; then a mean chance.

    The chance is the mean over ``chance_mode``'s rows that have one.
    """
    cells = []
    for mode in [*MODES, TIMELINE]:
        here = [r for r in rows if r["mode"] == mode]
        cells.append(f"{sum(bool(r[field]) for r in here)}/{len(here)}" if here else "-")
    chances = [r["chance"] for r in rows if r["mode"] == chance_mode and "chance" in r]
    cells.append(f"{sum(chances) / len(chances):.0%}" if chances else "-")
    return f"| {label} | " + " | ".join(cells) + " |"


def _listed_recall(evidence: list[dict[str, Any]]) -> list[str]:
    """The recall table's rows for the element lists: items they held, per mode.

    A mode without lists, or rows judged before them, show "-". The chance column is
    standard_structured's: screenshot-only agents that read the list too.
    """
    out = []
    for channel, transient in (("audio", None), ("visual", True), ("visual", False)):
        mine = [
            r
            for r in evidence
            if r["channel"] == channel
            and (transient is None or r["transient"] == transient)
            and "listed" in r
        ]
        if not mine:
            continue
        kind = "" if transient is None else f" ({'transient' if transient else 'lasting'})"
        out.append(_recall_row(f"{channel}{kind}, listed", mine, "listed", STRUCTURED))
    return out


def _judged_without_lists(evidence: list[dict[str, Any]]) -> list[str]:
    """Tasks with a row of a mode that has element lists but no ``listed``: judged before them."""
    tasks = {r["task"] for r in evidence if has_lists(r["mode"]) and "listed" not in r}
    return sorted(tasks, key=catalogue_order)


def render_summary(
    rows: list[dict[str, Any]],
    tasks: list[str],
    step_s: float = STEP_S,
    stale: Iterable[str] = (),
) -> str:
    """The audit as Markdown.

    The headline figures, evidence recall per channel and mode (with what the element lists
    held), the task x check table, and every failure with its reason; the ``stale`` tasks,
    changed since they were judged; and the tasks judged before the element list, whose rows
    lack its checks (rows from before it have no ``listed``).
    """
    by_task: dict[str, list[dict[str, Any]]] = {t: [] for t in tasks}
    for row in rows:
        by_task.setdefault(row["task"], []).append(row)

    def passed(task: str, check: str) -> bool | None:
        mine = [r for r in by_task[task] if r["check"] == check]
        return all(r["ok"] for r in mine) if mine else None

    n = len(tasks)
    solvable = sum(passed(t, "solvable") is True for t in tasks)
    guessable = sum(
        any(passed(t, c) is False for c in ("null", "random", "nearmiss")) for t in tasks
    )
    premise = sum(passed(t, "evidence") is True for t in tasks)
    evidence = [r for r in rows if r["check"] == "evidence"]
    judged = {r["check"] for r in rows}

    def figure(count: int, *checks: str) -> str:
        """``count/n``, or what says a partial audit did not run these checks."""
        return f"{count}/{n}" if judged & set(checks) else "not judged in this audit"

    out = [
        "# Validity audit",
        "",
        "- Solvable (every seed of the scripted solution succeeds): "
        + figure(solvable, "solvable"),
        "- Guessable (the null, random or near-miss agent succeeds): "
        + figure(guessable, "null", "random", "nearmiss"),
        f"- Evidence where the premise holds (each item seen in the modes that should see it, "
        f"and not where it should not): {figure(premise, 'evidence')}",
    ]
    static = [t for t in tasks if passed(t, "silent") is not None]
    if static:
        quiet = sum(passed(t, "silent") is True for t in static)
        out.append(
            f"- Static controls where the keyframe and audio channels stay silent (no keyframe, "
            f"no Whisper call, in every mode): {quiet}/{len(static)}"
        )
    out += _listed_headline(evidence)
    stale = list(stale)
    if stale:
        out.append(f"- Changed since they were audited (listed below): {len(stale)}/{n}")
    unlisted = _judged_without_lists(evidence)
    if unlisted:
        out.append(
            f"- Judged before the element list (no element checks, listed below): "
            f"{len(unlisted)}/{n}"
        )
    out += [
        "",
        "## Evidence recall per channel and mode",
        "",
        "Items seen by the watcher (the scripted solution, one look every "
        f"{step_s:g} s). *timeline*: the run that records every screen; an audio item there is "
        "one readable on the page. *chance*: the mean share of screenshot-only agents stepping "
        f"every {step_s:g} s that see a visual item. *listed*: items whose keys the page "
        "element lists alone held (audio: at any time, and none may be; visual: in the item's "
        "window), in the modes with the list; its chance is that of the same agents reading "
        "the list too (standard_structured's).",
        "",
        "| channel | " + " | ".join([*MODES, TIMELINE, "chance"]) + " |",
        "|---" * (len(MODES) + 3) + "|",
    ]
    for channel, transient in (("audio", None), ("visual", True), ("visual", False)):
        label = (
            channel
            if transient is None
            else f"{channel} ({'transient' if transient else 'lasting'})"
        )
        mine = [
            r
            for r in evidence
            if r["channel"] == channel and (transient is None or r["transient"] == transient)
        ]
        out.append(_recall_row(label, mine, "seen", STANDARD))
    out += _listed_recall(evidence)
    out += [
        "",
        "## Tasks",
        "",
        "| task | " + " | ".join(CHECKS) + " |",
        "|---" * (len(CHECKS) + 1) + "|",
    ]
    marks = {True: "pass", False: "FAIL", None: "-"}
    for task in tasks:
        out.append(f"| {task} | " + " | ".join(marks[passed(task, c)] for c in CHECKS) + " |")
    columns = [*MODES, TIMELINE]
    out += [
        "",
        "## Evidence by task and mode",
        "",
        "Items seen of the task's items (an audio item in the timeline: readable on the page); "
        "`!` marks a mode where an item failed its check.",
        "",
        "| task | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for task in tasks:
        cells = []
        for mode in columns:
            here = [r for r in evidence if r["task"] == task and r["mode"] == mode]
            bad = "!" if any(not r["ok"] for r in here) else ""
            cells.append(f"{sum(r['seen'] for r in here)}/{len(here)}{bad}" if here else "-")
        out.append(f"| {task} | " + " | ".join(cells) + " |")
    unread = [r for r in rows if r["check"] == "unread"]
    if unread:
        out += [
            "",
            f"## Visual evidence that is not text ({len(unread)})",
            "",
            "Items without keys (a highlight, a shape): OCR cannot look for them, so they are "
            "not checked.",
            "",
        ]
        out += [f"- {r['task']} #{r['evidence']}: {r['fact']}" for r in unread]
    if stale:
        out += [
            "",
            f"## Changed since they were audited ({len(stale)})",
            "",
            "Their files or evidence changed after these rows were judged: audit them again.",
            "",
            ", ".join(stale),
        ]
    if unlisted:
        out += [
            "",
            f"## Judged before the element list ({len(unlisted)})",
            "",
            "Their rows were judged before the modes had the page elements channel, so they lack "
            "its checks (spoken evidence listed, a transient item's chance with the list): "
            "audit them again.",
            "",
            ", ".join(unlisted),
        ]
    failures = [r for r in rows if not r["ok"]]
    out += ["", f"## Failures ({len(failures)})", ""]
    for r in failures:
        where = r["mode"] + (f", evidence #{r['evidence']}" if r["check"] == "evidence" else "")
        out.append(f"- {r['task']} {r['check']} ({where}): {r['reason']}")
    return "\n".join(out) + "\n"
