"""The one resize every image goes through: a model's input, RL observations."""

import numpy as np

from dynacu_gym import imaging
from dynacu_gym.imaging import resize


def _exact(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """The general path (fractional areas), whatever the sizes."""
    out = imaging._area_axis(image.astype(np.float64), height, axis=0)
    out = imaging._area_axis(out, width, axis=1)
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def test_the_block_path_is_the_area_average_where_sizes_divide():
    rng = np.random.default_rng(7)
    screen = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    # The same means; a mean that is exactly a half may round the other way in the general
    # path, whose running sums carry float error.
    gray = rng.integers(0, 256, (720, 1280), dtype=np.uint8)
    for image, width, height in (
        (screen, 128, 72),
        (screen, 640, 360),
        (screen, 1280, 360),
        (gray, 160, 90),
    ):
        fast = resize(image, width, height).astype(int)
        exact = _exact(image, width, height).astype(int)
        assert fast.shape == exact.shape
        assert np.abs(fast - exact).max() <= 1 and (fast != exact).mean() < 0.01


def test_uneven_sizes_weigh_the_pixels_a_cell_covers_in_part():
    row = np.array([[[0], [90], [180]]], dtype=np.uint8)  # 3 pixels to 2: 1.5 pixels a cell
    assert resize(row, 2, 1)[0, :, 0].tolist() == [30, 150]
    image = np.zeros((720, 1280, 3), dtype=np.uint8)
    image[:360, :640] = 200
    small = resize(image, 3, 3)
    assert small[0, 0, 0] == 200 and small[1, 1, 0] == 50 and small[2, 2, 0] == 0
    assert resize(image, 1280, 720) is image
