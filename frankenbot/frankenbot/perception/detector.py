"""Optional open-vocabulary detector backend (OWLv2 through transformers).

On a real cell the objects are not always saturated single-colour blocks; an open-vocabulary
detector finds "mug" or "sponge" from text. It only proposes 2-D boxes with labels; depth then
lifts each box to a 3-D object exactly like the geometric backend (largest above-table blob in the
box -> centre, size, yaw, colour), so the rest of the pipeline and the tracker are unchanged.

Checkpoint for a robot (install it there, never downloaded at run time here): the Hugging Face
repository ``google/owlv2-base-patch16-ensemble`` saved to a local directory
(``Owlv2ForObjectDetection.from_pretrained(...).save_pretrained(dir)`` plus the processor), then
set the node parameters ``detector_backend: owlv2`` and ``detector_model: <dir>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

import numpy as np

from frankenbot.errors import ConfigError, PerceptionError


@dataclass(frozen=True)
class Box2D:
    """One proposal: text label, score in [0, 1], box (x0, y0, x1, y1) in pixels."""

    label: str
    score: float
    box: tuple[float, float, float, float]


class BoxDetector(Protocol):
    """Anything that turns an RGB image and text queries into labelled boxes."""

    def detect(self, rgb: np.ndarray, queries: Sequence[str]) -> list[Box2D]: ...


def iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def non_max_suppression(boxes: Sequence[Box2D], threshold: float) -> list[Box2D]:
    """Keep the best-scoring box among those overlapping more than ``threshold`` (any label)."""
    kept: list[Box2D] = []
    for b in sorted(boxes, key=lambda x: -x.score):
        if all(iou(b.box, k.box) <= threshold for k in kept):
            kept.append(b)
    return kept


class Owlv2Detector:
    """OWLv2 through transformers; pass a loaded model + processor or use ``from_pretrained``."""

    def __init__(self, model: Any, processor: Any, threshold: float = 0.2,
                 nms_iou: float = 0.5, max_boxes: int = 50) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"detector threshold must be in [0, 1], got {threshold}")
        self.model = model.eval()
        self.processor = processor
        self.threshold = threshold
        self.nms_iou = nms_iou
        self.max_boxes = max_boxes

    @classmethod
    def from_pretrained(cls, path: str | Path, **kwargs: Any) -> "Owlv2Detector":
        """Load a checkpoint saved in a local directory (never from a hub)."""
        p = Path(path)
        if not (p / "config.json").is_file():
            raise ConfigError(f"no OWLv2 checkpoint in {p} (config.json missing); see the "
                              "README for the checkpoint to install on a robot")
        from transformers import Owlv2ForObjectDetection, Owlv2Processor

        model = Owlv2ForObjectDetection.from_pretrained(p, local_files_only=True)
        processor = Owlv2Processor.from_pretrained(p, local_files_only=True)
        return cls(model, processor, **kwargs)

    def detect(self, rgb: np.ndarray, queries: Sequence[str]) -> list[Box2D]:
        import torch

        labels = [q.strip() for q in queries if q.strip()]
        if not labels:
            raise PerceptionError("the open-vocabulary detector needs at least one text query")
        if rgb.ndim != 3 or rgb.shape[2] != 3:
            raise PerceptionError(f"rgb must be HxWx3, got {rgb.shape}")
        h, w = rgb.shape[:2]
        max_len = int(getattr(self.model.config.text_config, "max_position_embeddings", 16))
        inputs = self.processor(text=[labels], images=rgb, return_tensors="pt",
                                padding="max_length", truncation=True, max_length=max_len)
        with torch.no_grad():
            outputs = self.model(**inputs)
        # OWLv2 pads to a square, so boxes come scaled to (max side)^2: clip to the image.
        side = max(h, w)
        result = self.processor.post_process_grounded_object_detection(
            outputs, threshold=self.threshold, target_sizes=[(side, side)], text_labels=[labels])
        out = []
        r = result[0]
        for score, label, box in zip(r["scores"].tolist(), r["labels"].tolist(),
                                     r["boxes"].tolist(), strict=True):
            x0, y0, x1, y1 = (float(v) for v in box)
            x0, x1 = min(max(x0, 0.0), w - 1.0), min(max(x1, 0.0), w - 1.0)
            y0, y1 = min(max(y0, 0.0), h - 1.0), min(max(y1, 0.0), h - 1.0)
            if x1 - x0 < 2 or y1 - y0 < 2:
                continue
            out.append(Box2D(labels[int(label)], float(score), (x0, y0, x1, y1)))
        return non_max_suppression(out, self.nms_iou)[:self.max_boxes]
