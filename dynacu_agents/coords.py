"""What a model's numbers mean: the image it is shown and the space its coordinates are in.

Models are trained on their own coordinate systems: screen pixels, the pixels of the image they
were given (Qwen2.5-VL, Anthropic's computer use at its declared display size), thousandths of
the image (UI-TARS 0-1000, Gemini 0-999) or fractions (0-1). An agent fits each screenshot into
the image the model prefers (:class:`ImageFit`: full size, a long side, or a fixed size with
the screen scaled into it and the rest padded), states the space and the image's size in its
prompt (:meth:`CoordSpace.describe`), and maps every point the model names back to screen pixels
(:meth:`CoordSpace.to_screen`), where a point outside the space, or on the padding, is an agent
mistake (:class:`~dynacu_gym.actions.ActionError`) that says what was expected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dynacu_gym.actions import SCREEN_HEIGHT, SCREEN_WIDTH, ActionError
from dynacu_gym.imaging import resize  # noqa: F401 - also named here, where it was

COORDS = ("screen", "image", "norm1000", "norm1")
MAX_SIDE = 4096  # the longest side of an image a model is sent (a fixed size may scale up)
PAD_VALUE = 0  # the padding around a screen fitted into a fixed size: black
# The largest numbers of each normalised space: UI-TARS writes 0..1000 and Gemini 0..999, so
# the space takes 1000 as its right and bottom edge.
NORM_SPAN = {"norm1000": 1000.0, "norm1": 1.0}


@dataclass(frozen=True)
class ImageFit:
    """How the screen is fitted into the image a model sees.

    The screen (``SCREEN_WIDTH`` x ``SCREEN_HEIGHT``) is scaled to ``content`` pixels and placed
    at ``offset`` in an image of ``size`` pixels; the rest is padding.

    Attributes:
        size: (width, height) of the image sent.
        content: (width, height) the screen is scaled to.
        offset: (x, y) of the screen's top left corner in the image.
    """

    size: tuple[int, int] = (SCREEN_WIDTH, SCREEN_HEIGHT)
    content: tuple[int, int] = (SCREEN_WIDTH, SCREEN_HEIGHT)
    offset: tuple[int, int] = (0, 0)

    @classmethod
    def long_side(cls, pixels: int) -> ImageFit:
        """The screen scaled so its longer side is ``pixels``, keeping the aspect; no padding.

        Raises:
            ValueError: ``pixels`` is not a positive number no larger than the screen's.
        """
        longest = max(SCREEN_WIDTH, SCREEN_HEIGHT)
        if not isinstance(pixels, int) or not 1 <= pixels <= longest:
            raise ValueError(f"expected a long side in 1..{longest} pixels, got {pixels!r}")
        scale = pixels / longest
        content = (max(1, round(SCREEN_WIDTH * scale)), max(1, round(SCREEN_HEIGHT * scale)))
        return cls(content, content, (0, 0))

    @classmethod
    def fixed(cls, width: int, height: int) -> ImageFit:
        """The screen scaled to fit ``width`` x ``height``, centred, the rest padded black.

        Raises:
            ValueError: a side that is not a whole number in 1..``MAX_SIDE``.
        """
        for name, value in (("width", width), ("height", height)):
            if not isinstance(value, int) or not 1 <= value <= MAX_SIDE:
                raise ValueError(f"expected an image {name} in 1..{MAX_SIDE} pixels, got {value!r}")
        scale = min(width / SCREEN_WIDTH, height / SCREEN_HEIGHT)
        content = (
            min(width, max(1, round(SCREEN_WIDTH * scale))),
            min(height, max(1, round(SCREEN_HEIGHT * scale))),
        )
        offset = ((width - content[0]) // 2, (height - content[1]) // 2)
        return cls((width, height), content, offset)

    @classmethod
    def stretched(cls, width: int, height: int) -> ImageFit:
        """The screen resized to exactly ``width`` x ``height``, its aspect changed to fit.

        What Qwen2.5-VL's processor does (each side rounded to a multiple of 28: 1288x728).

        Raises:
            ValueError: a side that is not a whole number in 1..``MAX_SIDE``.
        """
        fit = cls.fixed(width, height)
        return cls(fit.size, fit.size, (0, 0))

    @classmethod
    def parse(cls, text: str) -> ImageFit:
        """An image size in words, as the ``--image-size`` option takes it.

        ``"full"``, a long side ``"1024"``, a size to pad into ``"1024x768"``, or a size to
        stretch to ``"1288x728:stretch"``.

        Raises:
            ValueError: none of these forms, or an out-of-range size.
        """
        text = text.strip().lower()
        if text == "full":
            return cls()
        size, _, how = text.partition(":")
        width, sep, height = size.partition("x")
        try:
            if how not in ("", "stretch") or (how and not sep):
                raise TypeError
            if not sep:
                return cls.long_side(int(size))
            make = cls.stretched if how else cls.fixed
            return make(int(width), int(height))
        except (TypeError, ValueError) as e:
            if isinstance(e, ValueError) and "expected" in str(e):
                raise
            raise ValueError(
                f"expected an image size 'full', a long side such as '1024', a size to pad into "
                f"such as '1024x768' or one to stretch to such as '1288x728:stretch', "
                f"got {text!r}"
            ) from None

    @property
    def padded(self) -> bool:
        """Whether the image has padding around the screen."""
        return self.size != self.content

    def describe(self) -> str:
        """The image in words, for a prompt."""
        width, height = self.size
        if not self.padded:
            return f"{width}x{height} pixels"
        x, y = self.offset
        return (
            f"{width}x{height} pixels, the screen scaled to {self.content[0]}x{self.content[1]} at "
            f"({x}, {y}) and the rest black padding"
        )

    def apply(self, frame: np.ndarray) -> np.ndarray:
        """The image the model sees: ``frame`` (a screen-sized H x W x C uint8) fitted."""
        frame = np.asarray(frame, dtype=np.uint8)
        content = resize(frame, *self.content)
        if not self.padded:
            return content
        width, height = self.size
        out = np.full((height, width) + frame.shape[2:], PAD_VALUE, dtype=np.uint8)
        x, y = self.offset
        out[y : y + content.shape[0], x : x + content.shape[1]] = content
        return out


@dataclass(frozen=True)
class CoordSpace:
    """The space a model's coordinates are in, over the image ``fit`` makes.

    Attributes:
        name: one of :data:`COORDS`: ``screen`` (screen pixels, whatever the image's size),
            ``image`` (pixels of the image sent), ``norm1000`` (thousandths of the image's
            width and height, 0 to 1000) or ``norm1`` (fractions, 0 to 1).
        fit: how the screen is fitted into the image sent.
    """

    name: str = "screen"
    fit: ImageFit = ImageFit()

    def __post_init__(self) -> None:
        if self.name not in COORDS:
            raise ValueError(f"expected coords in {', '.join(COORDS)}, got {self.name!r}")

    @property
    def bounds(self) -> tuple[float, float]:
        """The largest x and y the space takes (both start at 0)."""
        if self.name == "screen":
            return SCREEN_WIDTH - 1, SCREEN_HEIGHT - 1
        if self.name == "image":
            return self.fit.size[0] - 1, self.fit.size[1] - 1
        span = NORM_SPAN[self.name]
        return span, span

    def describe(self) -> str:
        """The coordinates in words, for a prompt: what x and y mean and their ranges."""
        image = f"The screenshot you are shown is {self.fit.describe()}."
        top_x, top_y = self.bounds
        if self.name == "screen":
            scaled = "" if self.fit.size == (SCREEN_WIDTH, SCREEN_HEIGHT) else " (scale up from it)"
            return (
                f"{image} Coordinates are pixels of the {SCREEN_WIDTH}x{SCREEN_HEIGHT} screen"
                f"{scaled}: x from 0 (left) to {top_x:g} (right), y from 0 (top) to {top_y:g} "
                "(bottom)."
            )
        if self.name == "image":
            return (
                f"{image} Coordinates are pixels of that image: x from 0 (left) to {top_x:g} "
                f"(right), y from 0 (top) to {top_y:g} (bottom)."
            )
        span = NORM_SPAN[self.name]
        return (
            f"{image} Coordinates are relative to that image, from 0 to {span:g}: x = 0 is its "
            f"left edge and {span:g} its right, y = 0 its top and {span:g} its bottom."
        )

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        """The screen pixel a model's point names.

        Raises:
            ActionError: ``x`` or ``y`` is not a finite number, lies outside the space, or
                lands on the image's padding; the message gives the space's ranges.
        """
        for value in (x, y):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ActionError(f"expected numbers for a point's x and y, got ({x!r}, {y!r})")
            if not math.isfinite(value):
                raise ActionError(f"expected finite coordinates, got ({x!r}, {y!r})")
        top_x, top_y = self.bounds
        if not (0 <= x <= top_x and 0 <= y <= top_y):
            raise ActionError(
                f"the point ({x:g}, {y:g}) is outside the {self.name} coordinate space; expected "
                f"0 <= x <= {top_x:g} and 0 <= y <= {top_y:g}"
            )
        if self.name == "screen":
            return int(round(x)), int(round(y))
        if self.name == "image":
            px, py = x + 0.5, y + 0.5  # a pixel's centre
        else:
            span = NORM_SPAN[self.name]
            px, py = x / span * self.fit.size[0], y / span * self.fit.size[1]
        (ox, oy), (cw, ch) = self.fit.offset, self.fit.content
        if not (ox <= px <= ox + cw and oy <= py <= oy + ch):
            raise ActionError(
                f"the point ({x:g}, {y:g}) lies on the image's padding, outside the screen "
                f"(the screen is the image's {cw}x{ch} pixels at ({ox}, {oy}))"
            )
        sx = (px - ox) / cw * SCREEN_WIDTH
        sy = (py - oy) / ch * SCREEN_HEIGHT
        return min(SCREEN_WIDTH - 1, int(sx)), min(SCREEN_HEIGHT - 1, int(sy))

    def from_screen(self, x: float, y: float) -> tuple[float, float]:
        """The model's numbers for a screen pixel (the inverse of :meth:`to_screen`)."""
        if self.name == "screen":
            return float(x), float(y)
        (ox, oy), (cw, ch) = self.fit.offset, self.fit.content
        px = ox + (x + 0.5) / SCREEN_WIDTH * cw
        py = oy + (y + 0.5) / SCREEN_HEIGHT * ch
        if self.name == "image":
            return px - 0.5, py - 0.5
        span = NORM_SPAN[self.name]
        return px / self.fit.size[0] * span, py / self.fit.size[1] * span
