"""Coordinate spaces and image fits: every point a model names lands where it meant."""

from __future__ import annotations

import numpy as np
import pytest

from dynacu_agents.coords import CoordSpace, ImageFit, resize
from dynacu_gym.actions import ActionError


def test_fits_scale_pad_and_stretch() -> None:
    assert ImageFit.parse("full") == ImageFit()
    assert ImageFit.parse("640") == ImageFit((640, 360), (640, 360), (0, 0))
    assert ImageFit.parse("1024x768") == ImageFit((1024, 768), (1024, 576), (0, 96))
    assert ImageFit.parse("720x720") == ImageFit((720, 720), (720, 405), (0, 157))
    assert ImageFit.parse("1288x728:stretch") == ImageFit((1288, 728), (1288, 728), (0, 0))
    assert ImageFit.parse(" 1024X768 ").padded and not ImageFit.parse("1024").padded


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("huge", "expected an image size 'full', a long side such as '1024'"),
        ("1024:stretch", "a size to pad into such as '1024x768'"),
        ("1024x768:crop", "one to stretch to such as '1288x728:stretch'"),
        ("2000", "expected a long side in 1..1280 pixels, got 2000"),
        ("0x10", "expected an image width in 1..4096 pixels, got 0"),
    ],
)
def test_a_bad_size_says_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ImageFit.parse(text)


def test_a_padded_image_holds_the_screen_where_the_fit_says() -> None:
    screen = np.full((720, 1280, 3), 200, dtype=np.uint8)
    screen[:, 640:] = 10  # the right half dark
    image = ImageFit.parse("1024x768").apply(screen)
    assert image.shape == (768, 1024, 3)
    assert (image[:96] == 0).all() and (image[672:] == 0).all()  # the padding
    assert (image[96:672, :512] == 200).all() and (image[96:672, 512:] == 10).all()


def test_resize_averages_areas() -> None:
    image = np.zeros((4, 8, 3), dtype=np.uint8)
    image[:, 0] = 100  # half of the first 2x2 block
    out = resize(image, 4, 2)
    assert out.shape == (2, 4, 3)
    assert out[0, 0, 0] == 50 and out[0, 1, 0] == 0
    # Three columns into two: the middle one is shared half and half.
    row = np.array([[[0], [90], [180]]], dtype=np.uint8)
    assert resize(row, 2, 1)[0, :, 0].tolist() == [30, 150]
    assert resize(image, 8, 4) is image
    assert resize(np.zeros((720, 1280, 3), dtype=np.uint8), 500, 281).shape == (281, 500, 3)


@pytest.mark.parametrize(
    ("space", "fit", "point", "screen"),
    [
        ("screen", "640", (1279, 719), (1279, 719)),
        ("image", "640", (320, 180), (641, 361)),  # the centre of image pixel 320 is 641 on screen
        ("image", "full", (0, 0), (0, 0)),
        ("image", "1288x728:stretch", (1287, 727), (1279, 719)),
        ("norm1000", "full", (500, 500), (640, 360)),
        ("norm1000", "full", (999, 999), (1278, 719)),  # Gemini's largest numbers
        ("norm1000", "full", (1000, 1000), (1279, 719)),  # UI-TARS's
        ("norm1000", "1024x768", (500, 500), (640, 360)),
        ("norm1", "full", (0.25, 0.5), (320, 360)),
    ],
)
def test_points_map_to_the_screen(space, fit, point, screen) -> None:
    coords = CoordSpace(space, ImageFit.parse(fit))
    assert coords.to_screen(*point) == screen
    back = coords.from_screen(*screen)
    assert coords.to_screen(*back) == screen  # and back again


@pytest.mark.parametrize(
    ("space", "fit", "point", "message"),
    [
        ("screen", "full", (1280, 10), r"outside the screen coordinate space; expected 0 <= x"),
        ("image", "640", (640, 10), r"outside the image coordinate space; expected 0 <= x <= 639"),
        ("norm1000", "full", (-1, 10), r"\(-1, 10\) is outside the norm1000 coordinate space"),
        ("norm1", "full", (0.5, 1.5), r"expected 0 <= x <= 1 and 0 <= y <= 1"),
        ("norm1000", "1024x768", (500, 40), r"lies on the image's padding, outside the screen"),
        ("image", "1024x768", (10, 700), r"the image's 1024x576 pixels at \(0, 96\)"),
    ],
)  # fmt: skip
def test_a_point_off_the_space_is_a_mistake(space, fit, point, message) -> None:
    with pytest.raises(ActionError, match=message):
        CoordSpace(space, ImageFit.parse(fit)).to_screen(*point)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "10", True, None])
def test_a_point_must_be_two_numbers(bad) -> None:
    with pytest.raises(ActionError, match="expected (numbers|finite coordinates)"):
        CoordSpace("image").to_screen(bad, 10)


def test_an_unknown_space_lists_the_choices() -> None:
    with pytest.raises(ValueError, match="expected coords in screen, image, norm1000, norm1"):
        CoordSpace("pixels")


def test_each_space_describes_its_ranges_and_the_image() -> None:
    padded = CoordSpace("image", ImageFit.parse("1024x768")).describe()
    assert padded.startswith("The screenshot you are shown is 1024x768 pixels, the screen scaled")
    assert "x from 0 (left) to 1023 (right), y from 0 (top) to 767 (bottom)" in padded
    assert "from 0 to 1000: x = 0 is its left edge" in CoordSpace("norm1000").describe()
    assert "from 0 to 1: x = 0" in CoordSpace("norm1").describe()
    assert "(scale up from it)" in CoordSpace("screen", ImageFit.parse("640")).describe()
    assert "scale up" not in CoordSpace("screen").describe()
