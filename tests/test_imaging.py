"""The one resize every image goes through (a model's input, RL observations); frames' space."""

import pickle

import numpy as np
from gymnasium import spaces

from dynacu_gym import imaging
from dynacu_gym.imaging import frame_space, resize


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


def _by_weights(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """Each output pixel from every input pixel's overlap with it: slow and plainly right."""

    def weights(n: int, size: int) -> np.ndarray:
        edges = np.linspace(0.0, n, size + 1)
        pixels = np.arange(n)[None, :]
        overlap = np.minimum(edges[1:, None], pixels + 1) - np.maximum(edges[:-1, None], pixels)
        return np.clip(overlap, 0, None) / (n / size)

    rows, cols = weights(image.shape[0], height), weights(image.shape[1], width)
    out = np.einsum("ih,hwc,jw->ijc", rows, image.astype(np.float64), cols)
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def test_shrinking_and_growing_match_the_overlap_of_every_pixel():
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    for width, height in ((7, 5), (20, 11), (53, 36), (60, 40), (100, 80), (1, 1)):
        got = resize(image, width, height).astype(int)
        assert np.abs(got - _by_weights(image, width, height)).max() <= 1, (width, height)
    row = np.array([[[0], [90], [180]]], dtype=np.uint8)  # 3 pixels to 4: 0.75 a cell
    assert resize(row, 4, 1)[0, :, 0].tolist() == [0, 60, 120, 180]


def test_frame_space_bounds_take_no_memory_and_behave_as_a_box():
    shape = (5, 720, 1280, 3)
    space = frame_space(shape)
    for bound in (space.low, space.high, space.bounded_below, space.bounded_above):
        assert bound.shape == shape and bound.strides == (0, 0, 0, 0)  # one value, viewed
    assert space == spaces.Box(0, 255, shape=shape, dtype=np.uint8)
    frame = space.sample()
    assert frame.shape == shape and frame.dtype == np.uint8 and space.contains(frame)
    assert not space.contains(frame.astype(np.float32))
    assert not space.contains(frame[:4])
    assert pickle.loads(pickle.dumps(space)) == space
