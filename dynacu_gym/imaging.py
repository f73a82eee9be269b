"""Writing frames to PNG without an imaging library (zlib and the PNG chunk format)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np


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
