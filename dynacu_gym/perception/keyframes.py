"""Keyframes: what the screen showed between two steps, captured in the background.

A capture thread grabs the env's X display at ``fps`` (straight from Xvfb, ~3 ms a frame, with
no load on the browser) and passes each frame through gates:

1. **Pixel gate.** The frame's gate view (the mean colour of each 4x4 block of pixels: a
   320x180 RGB image) is compared with the view of the last keyframe. If less than
   ``change_threshold`` (1%) of the screen changed, the frame is skipped. The screen is counted
   in 16x16-pixel cells, a cell changed when any channel of any of its view pixels moved by
   more than ``pixel_delta`` levels (see :func:`changed_fraction`). This costs a few
   milliseconds a frame, most of it the block means.
2. **CLIP gate** (optional, :mod:`dynacu_gym.perception.clip_gate`). A frame that passed the
   pixel gate is embedded on a worker thread, off the capture loop; if its cosine distance to
   the last keyframe's embedding is below the gate's threshold it is suppressed.

A frame that passes becomes a keyframe and the new anchor of both gates. A frame the CLIP gate
suppresses becomes the pixel gate's anchor only (the CLIP anchor stays the last keyframe).
Keyframes wait in a bounded pool until the env's next step collects the ones grabbed up to its
screenshot. Those that show only what the agent has already seen go (:func:`unseen`): the
frames grabbed while the agent's own input (a click, typing) took effect, whose outcome is the
step's screenshot, and any frame no different from the one before it in the agent's view, the
previous step's screenshot first. On a page that does nothing of its own the channel therefore
stays empty whatever the agent does. :func:`select_keyframes` then keeps at most K.

How K are chosen when more arrived: each keyframe is scored by how much it shows that the agent
has not seen (its novelty: the smallest changed fraction against the previous step's screenshot,
this step's screenshot and the keyframes already chosen) times how long it stayed on screen (its
stability: ``min(1, dwell / (2 / fps))``, so a frame on screen for one interval counts half). A
frame caught mid-change, whose successor shows all it showed (a fade or a slide half-way: see
:func:`passing`) comes after every other frame that shows something new: novelty alone favours
it, as a blend of two pages differs from both in every cell the change covers, while the settled
page differs from the page before only where its text does. The best-scoring keyframe is chosen,
novelties are updated against it, and so on (a weighted farthest-point choice); ties go to the
newer frame. The chosen ones are returned in time order. When the pool overflows between steps,
the keyframe with the lowest change-from-its-predecessor times stability, a passing one first,
is dropped (never the newest).
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from dynacu_gym.runtime.process import InfraError

if TYPE_CHECKING:
    from dynacu_gym.perception.clip_gate import ClipGate

GATE_BLOCK = 4  # a gate-view pixel is the mean of a 4x4 block of screen pixels (a shift by 4)
# Gate-view pixels per side of a change-counting cell: 16 screen pixels. A cell's row is 4
# pixels of 3 channels: 12 booleans, three uint32s.
CELL = 4
MAX_FPS = 30.0
CLIP_PENDING_MAX = 8  # frames waiting for the CLIP gate before it is bypassed (fail open)
# A frame is passing when this share of what changed after it lies within PASSING_REACH cells
# of the change under way (see :func:`passing`). Measured on D8's shop page, where the hero
# and the review cards slide 24 px as they fade: 0.90 to 1.00 of the cells within 2.
PASSING_SHARE = 0.85
PASSING_REACH = 2


def gate_view(frame: np.ndarray) -> np.ndarray:
    """The small view the gates compare: (H/4, W/4, C) uint8, each pixel a 4x4 block's mean.

    Block means rather than every 4th pixel, and every channel rather than one: sampling
    misses most of a line of thin text, and a single channel misses a change of hue at equal
    brightness (a pale blue card turned pale pink). Both are how one product, slide or row
    replaces another on a page, and a view blind to them judged two different pages of a slider
    the same. Frame sides not a multiple of 4 lose their last pixels.
    """
    if frame.ndim == 2:
        frame = frame[:, :, None]
    h = frame.shape[0] // GATE_BLOCK * GATE_BLOCK
    w = frame.shape[1] // GATE_BLOCK * GATE_BLOCK
    frame = frame[:h, :w]
    rows = frame[0::GATE_BLOCK].astype(np.uint16)  # sums of 16 bytes fit 12 bits
    for dy in range(1, GATE_BLOCK):
        rows += frame[dy::GATE_BLOCK]
    blocks = rows.reshape(h // GATE_BLOCK, w // GATE_BLOCK, GATE_BLOCK, frame.shape[2])
    total = blocks[:, :, 0] + blocks[:, :, 1]
    for dx in range(2, GATE_BLOCK):
        total += blocks[:, :, dx]
    total >>= 4  # / 16, the block's pixels
    return total.astype(np.uint8)


def changed_fraction(a: np.ndarray, b: np.ndarray, pixel_delta: int = 10) -> float:
    """Fraction of the screen that differs between two gate views, counted in cells.

    A cell is 4x4 view pixels (16x16 screen pixels); it counts as changed when any channel of
    any of its pixels moved by more than ``pixel_delta`` levels. Counting pixels instead would
    weigh a new line of text (thin strokes, the facts most tasks hide) at a fraction of its
    area, below the gate, while a cell count sees the line it occupies.
    """
    cells = changed_cells(a, b, pixel_delta)
    return float(np.count_nonzero(cells)) / max(cells.size, 1)


def changed_cells(a: np.ndarray, b: np.ndarray, pixel_delta: int = 10) -> np.ndarray:
    """Which cells differ between two gate views: a bool array, one per cell.

    See :func:`changed_fraction`. A view smaller than one cell is counted pixel by pixel.
    """
    diff = np.maximum(a, b)
    diff -= np.minimum(a, b)
    if diff.ndim == 2:
        diff = diff[:, :, None]
    h, w = (diff.shape[0] // CELL) * CELL, (diff.shape[1] // CELL) * CELL
    if h == 0 or w == 0:
        return (diff > pixel_delta).any(axis=2)
    channels = diff.shape[2]
    changed = np.ascontiguousarray(diff[:h, :w] > pixel_delta).reshape(h, w * channels)
    # A cell's row is CELL * channels booleans side by side: read four at a time as uint32s,
    # nonzero when any of them is set (CELL is 4, so a cell's row is whole uint32s).
    words = changed.view(np.uint32).reshape(h // CELL, CELL, w // CELL, channels * CELL // 4)
    rows = words[:, :, :, 0].copy()  # OR-ing word by word is ~5x faster than any(axis=3)
    for j in range(1, words.shape[3]):
        rows |= words[:, :, :, j]
    return rows.any(axis=1)


def passing(
    before: np.ndarray,
    view: np.ndarray,
    after: np.ndarray,
    dwell: float,
    interval: float,
    pixel_delta: int = 10,
) -> bool:
    """Whether a frame was caught mid-change, its successor showing all it showed.

    True when the frame stayed at most one capture interval (give or take half) and what
    changed after it (``view`` to ``after``) lies in or beside the change under way from the
    frame before it (``before`` to ``after``): a fade or a slide caught half-way, whose end
    state the next frame holds. Beside: a card that slides in as it fades moves its edges,
    which ``before`` and ``after`` show alike, a cell or two from the text that changed. A
    flash that came and went (a toast shown for one frame) is not passing: the cells it
    changed are as before in ``after``, away from any change.
    """
    if dwell > 1.5 * interval:
        return False
    later = changed_cells(view, after, pixel_delta)
    moved = np.count_nonzero(later)
    if moved == 0:
        return False  # nothing changed after it: it is the settled frame itself
    under_way = _grow(changed_cells(before, after, pixel_delta), PASSING_REACH)
    return bool(np.count_nonzero(later & under_way) >= PASSING_SHARE * moved)


def _grow(cells: np.ndarray, reach: int) -> np.ndarray:
    """The cells within ``reach`` cells (rows, columns or both) of a set one."""
    grown = cells.copy()
    for _ in range(reach):
        step = grown.copy()
        step[1:] |= grown[:-1]
        step[:-1] |= grown[1:]
        step[:, 1:] |= step[:, :-1].copy()
        step[:, :-1] |= step[:, 1:].copy()
        grown = step
    return grown


@dataclass(frozen=True)
class Keyframe:
    """A frame that passed the gates.

    Attributes:
        time: monotonic time of the grab (its midpoint).
        frame: the screen, (H, W, 3) uint8 RGB.
        view: its gate view.
        change: changed fraction against the keyframe before it when it was captured.
    """

    time: float
    frame: np.ndarray = field(repr=False)
    view: np.ndarray = field(repr=False)
    change: float


@dataclass
class CaptureStats:
    """Counters of a capture since it started (monotonic seconds, CPU seconds)."""

    grabbed: int = 0
    skipped: int = 0  # by the pixel gate
    clip_judged: int = 0
    clip_suppressed: int = 0
    clip_bypassed: int = 0  # accepted without the CLIP gate because it fell behind
    keyframes: int = 0
    pool_dropped: int = 0
    grab_seconds: float = 0.0
    gate_seconds: float = 0.0  # pixel gate only
    clip_seconds: float = 0.0
    cpu_seconds: float = 0.0  # capture thread + CLIP worker
    late_ticks: int = 0  # ticks missed because a grab ran past the next one
    started: float = 0.0
    last_grab: float = 0.0

    def as_dict(self) -> dict[str, float]:
        """The counters, with the achieved capture rate."""
        span = self.last_grab - self.started
        return {
            **{k: v for k, v in vars(self).items() if k not in ("started", "last_grab")},
            "fps": (self.grabbed / span) if span > 0 else 0.0,
        }


# Long (~230 lines): the capture thread, its gates and the pool they fill share one lock;
# split up, the locking would be spread over several classes.
class KeyframeCapture:
    """The background capture of one episode.

    Args:
        grab: returns the current screen as (H, W, 3) uint8 RGB; called on the capture thread.
        fps: frames grabbed per second (up to 30).
        change_threshold: the pixel gate: the fraction of gate-view pixels that must change.
        pixel_delta: levels a gate-view pixel must move by to count as changed.
        pool_size: keyframes held between two collects; beyond it the least informative go.
        clip: an optional CLIP gate.
        release: called on the capture thread as it ends, to free what ``grab`` holds for it
            (its connection to the display).
    """

    def __init__(
        self,
        grab: Callable[[], np.ndarray],
        fps: float = 3.0,
        change_threshold: float = 0.01,
        pixel_delta: int = 10,
        pool_size: int = 20,
        clip: ClipGate | None = None,
        release: Callable[[], None] | None = None,
    ) -> None:
        if not 0 < fps <= MAX_FPS:
            raise ValueError(f"expected fps in (0, {MAX_FPS:g}], got {fps!r}")
        if not 0 <= change_threshold < 1:
            raise ValueError(f"expected change_threshold in [0, 1), got {change_threshold!r}")
        if pool_size < 2:
            raise ValueError(f"expected pool_size >= 2, got {pool_size!r}")
        self.grab = grab
        self.fps = fps
        self.interval = 1.0 / fps
        self.change_threshold = change_threshold
        self.pixel_delta = pixel_delta
        self.pool_size = pool_size
        self.clip = clip
        self.release = release
        self.stats = CaptureStats()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._pool: list[Keyframe] = []
        self._anchor_view: np.ndarray | None = None
        self._anchor_embedding: np.ndarray | None = None
        self._pending: collections.deque[tuple[float, np.ndarray, np.ndarray, float]] = (
            collections.deque()
        )
        self._judging = False  # the CLIP worker holds a frame out of the queue
        self._grabbing: float | None = None  # when the grab being gated started, if one is
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._error: BaseException | None = None

    def start(self, anchor: np.ndarray, anchor_time: float) -> None:
        """Start capturing; ``anchor`` is the screen the agent saw at ``anchor_time``."""
        if self._threads:
            raise RuntimeError("the capture has already started")
        self._anchor_view = gate_view(anchor)
        self.stats.started = self.stats.last_grab = anchor_time
        if self.clip is not None:
            self._anchor_embedding = None
            self._pending.append((anchor_time, anchor, self._anchor_view, -1.0))  # anchor job
            worker = threading.Thread(target=self._judge_loop, name="keyframes-clip", daemon=True)
            self._threads.append(worker)
        capture = threading.Thread(target=self._capture_loop, name="keyframes", daemon=True)
        self._threads.append(capture)
        for thread in self._threads:
            thread.start()

    def alive(self) -> bool:
        """Whether every thread of the capture is running."""
        return bool(self._threads) and all(t.is_alive() for t in self._threads)

    def collect(self, until: float, wait_s: float = 0.25) -> list[Keyframe]:
        """Take the keyframes grabbed up to ``until`` out of the pool, oldest first.

        Waits up to ``wait_s`` for a frame whose grab started before ``until`` to be gated (a
        few milliseconds), and with the CLIP gate on, for such frames still being judged; ones
        not judged by then come with a later collect.

        Raises:
            InfraError: the capture thread failed (the display died).
        """
        deadline = time.monotonic() + wait_s
        with self._wake:
            while self._error is None:
                waiting = self._grabbing is not None and self._grabbing <= until
                if self.clip is not None:
                    waiting = waiting or self._judging or any(t <= until for t, *_ in self._pending)
                remaining = deadline - time.monotonic()
                if not waiting or remaining <= 0:
                    break
                self._wake.wait(remaining)
            if self._error is not None:
                raise InfraError(f"keyframe capture failed: {self._error}") from self._error
            taken = [k for k in self._pool if k.time <= until]
            self._pool = [k for k in self._pool if k.time > until]
        return taken

    def stop(self) -> None:
        """Stop the threads. Idempotent."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=5.0)
        self._threads = []

    # ---- threads ---------------------------------------------------------------------------

    def _capture_loop(self) -> None:
        cpu0 = time.thread_time()
        next_tick = time.monotonic() + self.interval
        try:
            while not self._stop.wait(max(0.0, next_tick - time.monotonic())):
                with self._lock:  # a collect sees this grab from the moment it starts
                    t0 = self._grabbing = time.monotonic()
                frame = self.grab()
                t1 = time.monotonic()
                grabbed_at = (t0 + t1) / 2
                view = gate_view(frame)
                with self._lock:
                    anchor = self._anchor_view
                assert anchor is not None
                change = changed_fraction(view, anchor, self.pixel_delta)
                t2 = time.monotonic()
                with self._wake:
                    s = self.stats
                    s.grabbed += 1
                    s.grab_seconds += t1 - t0
                    s.gate_seconds += t2 - t1
                    s.last_grab = grabbed_at
                    if change < self.change_threshold:
                        s.skipped += 1
                    elif self.clip is None:
                        self._accept(Keyframe(grabbed_at, frame, view, change))
                    else:
                        self._pending.append((grabbed_at, frame, view, change))
                    self._grabbing = None
                    self._wake.notify_all()
                    s.cpu_seconds += time.thread_time() - cpu0
                cpu0 = time.thread_time()
                next_tick += self.interval
                now = time.monotonic()
                if next_tick < now:  # a grab ran long: skip the ticks it overran
                    missed = int((now - next_tick) / self.interval) + 1
                    self.stats.late_ticks += missed
                    next_tick += missed * self.interval
        except BaseException as e:  # noqa: BLE001 - reported to the env at its next collect
            with self._wake:
                self._error = e
                self._grabbing = None
                self._wake.notify_all()
        finally:
            if self.release is not None:
                try:
                    self.release()
                except Exception:  # noqa: BLE001 - the display may be gone; nothing to free
                    pass

    def _judge_loop(self) -> None:
        assert self.clip is not None
        cpu0 = time.thread_time()
        try:
            while True:
                with self._wake:
                    while not self._pending and not self._stop.is_set():
                        self._wake.wait()
                    if self._stop.is_set():
                        return
                    if len(self._pending) > CLIP_PENDING_MAX:
                        # Fallen behind: accept what waits on the pixel gate alone, in order.
                        while self._pending:
                            t, frame, view, change = self._pending.popleft()
                            if change < 0:
                                continue
                            self.stats.clip_bypassed += 1
                            self._accept(Keyframe(t, frame, view, change))
                        self._anchor_embedding = None
                        self._wake.notify_all()
                        continue
                    t, frame, view, change = self._pending.popleft()
                    if change >= 0 and self._anchor_view is not None:
                        # The anchor may have moved while this frame waited: re-gate it.
                        change = changed_fraction(view, self._anchor_view, self.pixel_delta)
                        if change < self.change_threshold:
                            self.stats.skipped += 1
                            self._wake.notify_all()
                            continue
                    self._judging = True
                t0 = time.monotonic()
                embedding = self.clip.embed(frame)
                spent = time.monotonic() - t0
                with self._wake:
                    self._judging = False
                    self.stats.clip_seconds += spent
                    anchor = self._anchor_embedding
                    if change < 0:  # the episode's first screen
                        self._anchor_embedding = embedding
                    elif anchor is not None and self.clip.distance(embedding, anchor) < (
                        self.clip.threshold
                    ):
                        self.stats.clip_judged += 1
                        self.stats.clip_suppressed += 1
                        # Same content for CLIP: the pixel gate now compares with this frame,
                        # so a screen that stays like it costs no more embeddings. The CLIP
                        # anchor stays, so slow drift still adds up against the keyframe.
                        self._anchor_view = view
                    else:
                        self.stats.clip_judged += 1
                        self._accept(Keyframe(t, frame, view, change))
                        self._anchor_embedding = embedding
                    self.stats.cpu_seconds += time.thread_time() - cpu0
                    self._wake.notify_all()
                cpu0 = time.thread_time()
        except BaseException as e:  # noqa: BLE001 - reported to the env at its next collect
            with self._wake:
                self._error = e
                self._judging = False
                self._wake.notify_all()

    def _accept(self, keyframe: Keyframe) -> None:
        """Pool a keyframe and make it the anchor; the caller holds the lock."""
        self._pool.append(keyframe)
        self._anchor_view = keyframe.view
        self.stats.keyframes += 1
        if len(self._pool) > self.pool_size:
            self._pool.pop(_least_informative(self._pool, self.interval, self.pixel_delta))
            self.stats.pool_dropped += 1


def _stability(dwell: float, interval: float) -> float:
    return min(1.0, dwell / (2.0 * interval))


def _least_informative(pool: Sequence[Keyframe], interval: float, pixel_delta: int) -> int:
    """Index of the keyframe (never the newest) whose loss costs least."""
    best, best_score = 0, (True, float("inf"))
    for i in range(len(pool) - 1):
        before = (
            changed_fraction(pool[i].view, pool[i - 1].view, pixel_delta) if i else pool[0].change
        )
        dwell = pool[i + 1].time - pool[i].time
        mid_change = i > 0 and passing(
            pool[i - 1].view, pool[i].view, pool[i + 1].view, dwell, interval, pixel_delta
        )
        score = (not mid_change, before * _stability(dwell, interval))
        if score < best_score:
            best, best_score = i, score
    return best


def unseen(
    keyframes: Sequence[Keyframe],
    previous: np.ndarray,
    own_input: tuple[float, float] | None = None,
    change_threshold: float = 0.01,
    pixel_delta: int = 10,
) -> list[Keyframe]:
    """The keyframes of one step that show the agent something, oldest first.

    The gate compared each frame with the keyframe before it, which need not be what the agent
    saw: the agent's screenshot of the previous step may already show the change (the capture
    caught the agent's click only after that screenshot). So the gate runs again over the step's
    keyframes, starting from the previous screenshot, and frames grabbed during ``own_input``
    are left out first: they show the agent's input taking effect, whose outcome the step's
    screenshot shows. Each keyframe kept has its ``change`` against the one kept before it (the
    previous screenshot for the first), as the agent sees them.

    Args:
        keyframes: the keyframes grabbed since the previous screenshot, oldest first.
        previous: the gate view of the previous step's screenshot.
        own_input: (start, end) monotonic times of the step's input, or None.
        change_threshold: as for the gate.
        pixel_delta: as for the gate.
    """
    kept: list[Keyframe] = []
    last = previous
    for keyframe in keyframes:
        if own_input is not None and own_input[0] <= keyframe.time <= own_input[1]:
            continue
        change = changed_fraction(keyframe.view, last, pixel_delta)
        if change >= change_threshold:
            kept.append(dataclasses.replace(keyframe, change=change))
            last = keyframe.view
    return kept


def select_keyframes(
    keyframes: Sequence[Keyframe],
    k: int,
    seen: Sequence[np.ndarray],
    until: float,
    interval: float,
    pixel_delta: int = 10,
) -> list[Keyframe]:
    """At most ``k`` keyframes, the most informative, in time order (see the module doc).

    Args:
        keyframes: candidates, oldest first, each new to the agent (see :func:`unseen`).
        k: how many to keep.
        seen: gate views the agent has already seen: the previous step's screenshot first
            (what came before the first candidate), this step's last (what followed the last).
        until: when the last candidate's dwell ends (the step's screenshot).
        interval: the capture interval, seconds.
        pixel_delta: as for the gate.
    """
    if len(keyframes) <= k:
        return list(keyframes)
    times = [kf.time for kf in keyframes] + [until]
    views = [kf.view for kf in keyframes]
    stability = [_stability(times[i + 1] - times[i], interval) for i in range(len(keyframes))]
    # Frames caught mid-change come after every other frame that shows something new.
    settled = [True] * len(keyframes)
    for i in range(len(keyframes)):
        before = views[i - 1] if i else (seen[0] if seen else None)
        after = views[i + 1] if i + 1 < len(views) else (seen[-1] if seen else None)
        if before is not None and after is not None:
            dwell = times[i + 1] - times[i]
            settled[i] = not passing(before, views[i], after, dwell, interval, pixel_delta)
    novelty = [
        min((changed_fraction(kf.view, v, pixel_delta) for v in seen), default=1.0)
        for kf in keyframes
    ]
    chosen: list[int] = []
    while len(chosen) < k:
        best = max(
            (i for i in range(len(keyframes)) if i not in chosen),
            key=lambda i: (settled[i] and novelty[i] > 0, novelty[i] * stability[i], i),
        )
        chosen.append(best)
        for i in range(len(keyframes)):
            if i not in chosen:
                d = changed_fraction(keyframes[i].view, keyframes[best].view, pixel_delta)
                novelty[i] = min(novelty[i], d)
    return [keyframes[i] for i in sorted(chosen)]
