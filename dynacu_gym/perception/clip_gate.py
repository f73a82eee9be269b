"""The optional second keyframe gate: CLIP image embeddings (open_clip) of whole frames.

A frame that passed the pixel gate is embedded; if its cosine distance to the last keyframe's
embedding is below ``threshold`` (0.04 by default) it is suppressed as the same content (a
cursor, a progress bar, a re-rendered chart with the same numbers).

Weights are never downloaded. They come from one of:

- a checkpoint file (``weights="/models/clip-vit-b-32.safetensors"``, or ``.bin`` / ``.pt``);
- a pretrained tag already in a local cache (``weights="laion2b_s34b_b79k"``, looked up in
  ``cache_dir`` or the default Hugging Face and open_clip caches);
- ``weights="random"``: random-initialised weights, for tests and benchmarks of the gate's
  mechanics only (the distances then mean little).

Needs the ``clip`` extra: ``pip install "dynacu-gym[clip]"`` (torch, torchvision, open_clip).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from dynacu_gym.errors import ClipWeightsError

DEFAULT_ARCH = "ViT-B-32"
DEFAULT_THRESHOLD = 0.04
RANDOM_WEIGHTS = "random"
_CHECKPOINT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt")


class ClipGate:
    """An open_clip image tower that embeds frames, and the gate's threshold.

    Built by :func:`load_clip_gate`. ``embed`` is called from one worker thread at a time.
    """

    def __init__(
        self, model: Any, size: tuple[int, int], mean: Any, std: Any, threshold: float, name: str
    ) -> None:
        import torch

        self.model = model
        self.size = size
        self.mean = torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1)
        self.std = torch.tensor(std, dtype=torch.float32).view(1, 3, 1, 1)
        self.threshold = threshold
        self.name = name
        self._lock = threading.Lock()

    def embed(self, frame: np.ndarray) -> np.ndarray:
        """The unit-length embedding of a (H, W, 3) uint8 RGB frame.

        The whole screen is resized to the model's input (not cropped): a change at the edge
        of the screen must count as much as one in the middle.
        """
        import torch
        import torch.nn.functional as F  # noqa: N812

        with self._lock, torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(frame)).permute(2, 0, 1)[None].float()
            x = F.interpolate(x / 255.0, size=self.size, mode="bilinear", antialias=True)
            x = (x - self.mean) / self.std
            z = self.model.encode_image(x)[0]
            z = z / z.norm().clamp_min(1e-12)
            return z.numpy().astype(np.float32)

    @staticmethod
    def distance(a: np.ndarray, b: np.ndarray) -> float:
        """Cosine distance of two unit embeddings (0: same direction)."""
        return float(1.0 - np.dot(a, b))


def load_clip_gate(
    weights: str | Path,
    arch: str = DEFAULT_ARCH,
    cache_dir: str | Path | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    threads: int | None = None,
) -> ClipGate:
    """Build the CLIP gate from local weights.

    Args:
        weights: a checkpoint file, a pretrained tag of ``arch`` in a local cache, or
            ``"random"`` (see the module doc).
        arch: the open_clip model name, e.g. ``"ViT-B-32"``.
        cache_dir: where to look for a pretrained tag (default: the Hugging Face cache and
            ``~/.cache/clip``).
        threshold: cosine distance below which a frame is suppressed.
        threads: sets torch's CPU threads for the whole process (None leaves torch's setting);
            1 keeps the gate from competing with the browser on a small machine.

    Raises:
        ImportError: the ``clip`` extra is not installed.
        ClipWeightsError: the weights are missing or do not fit ``arch``.
    """
    if not 0 < threshold < 2:
        raise ValueError(f"expected a cosine-distance threshold in (0, 2), got {threshold!r}")
    try:
        import open_clip
        import torch
    except ImportError as e:
        raise ImportError(
            "the CLIP gate needs open_clip and torch: pip install 'dynacu-gym[clip]'"
        ) from e
    if arch not in open_clip.list_models():
        raise ClipWeightsError(
            f"unknown open_clip model {arch!r}; expected one of open_clip.list_models(), "
            f"e.g. {DEFAULT_ARCH!r}"
        )
    if threads is not None:
        torch.set_num_threads(threads)
    random_weights = str(weights) == RANDOM_WEIGHTS
    checkpoint = None if random_weights else resolve_weights(weights, arch, cache_dir)
    try:
        if checkpoint is None:
            # Random weights are seeded, so the gate's decisions repeat from run to run.
            with torch.random.fork_rng():
                torch.manual_seed(0)
                model = open_clip.create_model(arch, pretrained=None, device="cpu")
        else:  # a file path: open_clip loads it (and never reaches the network for one)
            model = open_clip.create_model(arch, pretrained=str(checkpoint), device="cpu")
    except Exception as e:  # torch and safetensors raise many kinds
        raise ClipWeightsError(
            f"could not load CLIP weights {checkpoint} into {arch}: {type(e).__name__}: {e}"
        ) from e
    model.eval()
    cfg = getattr(model.visual, "preprocess_cfg", {}) or {}
    size = cfg.get("size", getattr(model.visual, "image_size", 224))
    size = (size, size) if isinstance(size, int) else tuple(size)
    mean = cfg.get("mean", open_clip.OPENAI_DATASET_MEAN)
    std = cfg.get("std", open_clip.OPENAI_DATASET_STD)
    name = f"{arch} ({'random weights' if checkpoint is None else checkpoint})"
    return ClipGate(model, size, mean, std, threshold, name)


def resolve_weights(weights: str | Path, arch: str, cache_dir: str | Path | None = None) -> Path:
    """The checkpoint file for ``weights``: a path as given, or a pretrained tag found in cache.

    Raises:
        ClipWeightsError: no such file, or the tag is unknown or not in any local cache.
    """
    import open_clip

    path = Path(weights).expanduser()
    if path.is_file():
        return path
    looks_like_path = os.sep in str(weights) or str(weights).endswith(_CHECKPOINT_SUFFIXES)
    if looks_like_path:
        raise ClipWeightsError(f"no CLIP checkpoint at {path} (expected a .safetensors/.bin file)")
    tags = open_clip.list_pretrained_tags_by_model(arch)
    if str(weights) not in tags:
        raise ClipWeightsError(
            f"{weights!r} is neither a checkpoint file nor a pretrained tag of {arch} "
            f"(tags: {', '.join(tags) or 'none'}); pass the path of a checkpoint file"
        )
    cfg = open_clip.get_pretrained_cfg(arch, str(weights))
    found = _cached(cfg, cache_dir)
    if found is None:
        where = cache_dir or "the Hugging Face cache or ~/.cache/clip"
        raise ClipWeightsError(
            f"the {arch} weights {weights!r} are not in {where}, and nothing is downloaded; "
            "put the checkpoint there or pass its path as the weights"
        )
    return found


def _cached(cfg: dict[str, Any], cache_dir: str | Path | None) -> Path | None:
    """Where open_clip would have cached a pretrained config's file, if it is there."""
    hub = cfg.get("hf_hub", "")
    if hub:
        from huggingface_hub import try_to_load_from_cache

        # "org/model/" means open_clip's default file name; "org/model/file.bin" names one.
        repo_id, filename = os.path.split(hub)
        filename = filename or "open_clip_pytorch_model.bin"
        names = [filename]
        if filename.endswith(".bin"):
            names.insert(0, filename.replace("pytorch_model.bin", "model.safetensors"))
        for name in names:
            hit = try_to_load_from_cache(
                repo_id, name, cache_dir=str(cache_dir) if cache_dir else None
            )
            if isinstance(hit, str) and Path(hit).is_file():
                return Path(hit)
    url = cfg.get("url", "")
    if url:
        local = Path(cache_dir or Path.home() / ".cache" / "clip") / os.path.basename(url)
        if local.is_file():
            return local
    return None
