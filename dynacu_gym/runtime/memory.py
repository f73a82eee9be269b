"""Freed frames go back to the system: a fixed mmap threshold for glibc's malloc.

glibc serves an allocation of at least ``M_MMAP_THRESHOLD`` bytes (128 KiB at start) with a
mapping of its own, unmapped when it is freed. But each time such a buffer is freed it raises
the threshold to that buffer's size (up to 32 MiB): after the first freed screenshot, every
later buffer up to that size (a 1280x720 frame is 2.7 MiB) came from the heap and the threads'
arenas instead, and what it left there when freed stayed with the process. An env's process
held 655 MiB after an episode of B2 in ``aoi_interactive``, and 404 MiB with the threshold
fixed (peak 704 -> 584 MiB). The cost: each frame is a fresh mapping, its pages zeroed by
the kernel. In paused time on D6 (``benchmarks/paused_time.py``) one env ran 28.0 -> 27.0
steps/s, and behind the RL adapters one env 19.6 -> 18.7 and a 2-env vector env 36.3 -> 32.8.

Setting the threshold with ``mallopt`` fixes it, and also stops its raising. That alone made
Whisper's decode about 30% slower (CTranslate2's encoder buffers, 2-32 MiB, each mapped and
zeroed at every decode: 8.1 s of speech took 0.95 s with the beam, 0.72 s under glibc's
defaults), so the heaps also grow by :data:`TOP_PAD_BYTES` at once and keep up to
:data:`TRIM_THRESHOLD_BYTES` free at their top, where those buffers are then served from:
0.72 s again, for 88 MiB more at a worker's peak (485 -> 573 MiB of Python). Process-wide and
idempotent; without glibc (musl, macOS) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading

# mallopt's parameter numbers, from glibc's malloc.h
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
MMAP_THRESHOLD_BYTES = 256 * 1024  # far below a frame (2.7 MiB): every frame buffer is mapped
# How much a heap grows by at once, and keeps free at its top: Whisper's buffers fit there.
TOP_PAD_BYTES = 32 << 20
TRIM_THRESHOLD_BYTES = 64 << 20

_done = False
_lock = threading.Lock()


def give_back_large_buffers() -> bool:
    """Fix glibc's mmap threshold, top pad and trim threshold (above), once per process.

    Returns:
        Whether all three are set (False where the C library is not glibc).
    """
    global _done
    with _lock:
        if not _done:
            _done = _set_options()
        return _done


def _set_options() -> bool:
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # no C library by that name, or not glibc's
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return all(
        mallopt(param, value)
        for param, value in (
            (M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES),
            (M_TOP_PAD, TOP_PAD_BYTES),
            (M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES),
        )
    )
