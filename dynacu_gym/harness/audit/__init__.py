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

The package: :mod:`~.keys` (finding keys in text), :mod:`~.reading` (OCR),
:mod:`~.observed` (a watched episode's trace), :mod:`~.judges` (the verdicts),
:mod:`~.fingerprints` (what they depend on), :mod:`~.run` (the episodes and the judging) and
:mod:`~.summary` (rows on disk, merged parts, Markdown).
"""

from __future__ import annotations

from dynacu_gym.errors import AuditError
from dynacu_gym.harness.audit.fingerprints import fingerprint, forget_changed, task_hash
from dynacu_gym.harness.audit.judges import (
    AUDIO_MODES,
    KEYFRAME_MODES,
    LASTING_CHANCE,
    SLACK_S,
    STANDARD,
    STEP_S,
    STRUCTURED,
    TIMELINE,
    TIMELINE_MODE,
    TRANSIENT_CHANCE,
    frames_to_read,
    has_lists,
    judge_evidence,
    judge_silent,
)
from dynacu_gym.harness.audit.keys import WRAP_LINES, WRAP_WORDS, key_found, seen
from dynacu_gym.harness.audit.observed import (
    ELEMENTS_HEADING,
    PHASES,
    STEP_SPREAD,
    Observed,
    element_list_text,
    read_trace,
)
from dynacu_gym.harness.audit.reading import OCR_SCALES, ocr, ocr_all, tesseract
from dynacu_gym.harness.audit.run import (
    TIMELINE_ENV,
    TIMELINE_STEP_S,
    check_audit_scope,
    run_audit,
)
from dynacu_gym.harness.audit.summary import merge_audits, render_summary, write_audit
from dynacu_gym.harness.choices import CHECKS

__all__ = [
    "AUDIO_MODES",
    "CHECKS",
    "ELEMENTS_HEADING",
    "KEYFRAME_MODES",
    "LASTING_CHANCE",
    "OCR_SCALES",
    "PHASES",
    "SLACK_S",
    "STANDARD",
    "STEP_S",
    "STEP_SPREAD",
    "STRUCTURED",
    "TIMELINE",
    "TIMELINE_ENV",
    "TIMELINE_MODE",
    "TIMELINE_STEP_S",
    "TRANSIENT_CHANCE",
    "WRAP_LINES",
    "WRAP_WORDS",
    "AuditError",
    "Observed",
    "check_audit_scope",
    "element_list_text",
    "fingerprint",
    "forget_changed",
    "frames_to_read",
    "has_lists",
    "judge_evidence",
    "judge_silent",
    "key_found",
    "merge_audits",
    "ocr",
    "ocr_all",
    "read_trace",
    "render_summary",
    "run_audit",
    "seen",
    "task_hash",
    "tesseract",
    "write_audit",
]
