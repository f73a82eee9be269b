"""Frames without an imaging library: written as PNG, resized by area averaging, and their space.

PNG from zlib and the chunk format; resizing for a model's input and for RL observations;
:func:`frame_space`, the observation space of frames, whose bounds take no memory.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
from gymnasium import spaces


def frame_space(shape: tuple[int, ...]) -> spaces.Box:
    """The space of uint8 frames (0 to 255) of ``shape``, e.g. ``(5, 720, 1280, 3)``.

    gymnasium's ``Box`` keeps four arrays of its whole shape (its low and high bounds, and
    where each holds): for the screenshot and five keyframes of 1280x720 that was 66 MiB per
    env, the same value in every cell. Here each is a read-only view of one value
    (``np.broadcast_to``); ``contains``, ``sample``, equality and pickling work as before.
    """
    box = spaces.Box(0, 255, shape=shape, dtype=np.uint8)
    box.low = np.broadcast_to(np.uint8(0), shape)
    box.high = np.broadcast_to(np.uint8(255), shape)
    box.bounded_below = np.broadcast_to(np.True_, shape)
    box.bounded_above = np.broadcast_to(np.True_, shape)
    return box


def encode_png(image: np.ndarray, level: int = 6) -> bytes:
    """An (H, W, 3) or (H, W) uint8 array as PNG bytes."""
    if image.dtype != np.uint8 or image.ndim not in (2, 3):
        raise ValueError(
            f"expected a uint8 (H, W) or (H, W, 3) array, got {image.dtype} {image.shape}"
        )
    if image.ndim == 3 and image.shape[2] != 3:
        raise ValueError(f"expected 3 channels, got {image.shape[2]}")
    height, width = image.shape[:2]
    color_type = 2 if image.ndim == 3 else 0
    rows = np.ascontiguousarray(image).reshape(height, -1)
    raw = np.hstack([np.zeros((height, 1), dtype=np.uint8), rows]).tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, level))
        + chunk(b"IEND", b"")
    )


def save_png(image: np.ndarray, path: str | Path) -> Path:
    """Write ``image`` as a PNG file and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_png(image))
    return path


def resize(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """``image`` (H, W[, C]) uint8 resampled to ``width`` x ``height`` by area averaging.

    Each output pixel is the mean of the input area it covers (fractions of pixels weighed by
    how much of them it covers), so text shrinks without the aliasing of nearest-pixel picks.
    Where the sizes divide evenly (1280x720 to 128x72) that is the mean of each block, taken
    directly, which is faster. An image already that size comes back as it is.
    """
    in_height, in_width = image.shape[:2]
    if (in_height, in_width) == (height, width):
        return image
    if in_height % height == 0 and in_width % width == 0:
        rows = np.arange(0, in_height, in_height // height)
        cols = np.arange(0, in_width, in_width // width)
        # Summed as uint32 in reduceat itself: no uint32 copy of the whole image (11 MiB).
        rows_summed = np.add.reduceat(image, rows, axis=0, dtype=np.uint32)
        sums = np.add.reduceat(rows_summed, cols, axis=1)
        return np.rint(sums / ((in_height // height) * (in_width // width))).astype(np.uint8)
    out = _area_axis(image, height, axis=0)
    out = _area_axis(out, width, axis=1)
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def _area_axis(values: np.ndarray, size: int, axis: int) -> np.ndarray:
    """Area-average ``values`` along ``axis`` to ``size`` cells (float64).

    Each cell's sum is the integral of the pixels at its two fractional edges: the sum of the
    whole pixels before an edge plus the share of the pixel it cuts. Shrinking, the sums
    between the edges' pixels come from one ``reduceat``; growing (an edge may cut the pixel
    the one before it cut), from the running integral.
    """
    n = values.shape[axis]
    edges = np.linspace(0.0, n, size + 1)
    floors = np.floor(edges).astype(np.intp)  # the pixel each edge cuts
    shape = [-1 if a == axis else 1 for a in range(values.ndim)]
    frac = (edges - floors).reshape(shape)
    wide = np.uint32 if values.dtype.kind in "ui" else np.float64
    if size <= n:  # every cell spans a pixel or more, so the edges' pixels differ
        between = np.add.reduceat(values, floors[:-1], axis=axis, dtype=wide)
        integral = np.cumsum(between, axis=axis, dtype=np.float64)
    else:
        integral = np.cumsum(values, axis=axis, dtype=np.float64)
        integral = np.take(integral, np.maximum(floors[1:] - 1, 0), axis=axis)
        integral *= (floors[1:] > 0).reshape(shape)
    zero = np.zeros_like(np.take(integral, [0], axis=axis))
    before = np.concatenate([zero, integral], axis=axis)  # the whole pixels before each edge
    cut = np.take(values, np.minimum(floors, n - 1), axis=axis).astype(np.float64)
    return np.diff(before + cut * frac, axis=axis) / (n / size)
