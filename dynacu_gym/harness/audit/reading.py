"""Reading screenshots with OCR (tesseract), cached next to each image."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dynacu_gym.errors import AuditError


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
