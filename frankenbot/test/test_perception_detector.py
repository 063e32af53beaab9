"""Open-vocabulary backend: box lifting with depth, and OWLv2 plumbing with a tiny random model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from frankenbot.errors import ConfigError, PerceptionError
from frankenbot.eval import synthetic_frames as syn
from frankenbot.perception.config import PerceptionConfig
from frankenbot.perception.detector import Box2D, Owlv2Detector, non_max_suppression
from frankenbot.perception.pipeline import PerceptionPipeline


@pytest.fixture(scope="module")
def camera():
    return syn.default_camera(320, 240)


def _bbox(camera, centre, size) -> tuple[float, float, float, float]:
    """Image box around the projected corners of an axis-aligned box."""
    c = np.asarray(centre)
    half = np.asarray(size) / 2
    corners = np.array([c + half * np.array([sx, sy, sz]) for sx in (-1, 1) for sy in (-1, 1)
                        for sz in (-1, 1)])
    px = camera.project(corners)
    return (float(px[:, 0].min() - 2), float(px[:, 1].min() - 2), float(px[:, 0].max() + 2),
            float(px[:, 1].max() + 2))


class FixedBoxes:
    """A detector that returns prepared boxes (what OWLv2 would say about a known image)."""

    def __init__(self, boxes: list[Box2D]) -> None:
        self.boxes = boxes
        self.queries: list[str] = []

    def detect(self, rgb, queries):
        self.queries = list(queries)
        return list(self.boxes)


def test_detector_boxes_are_lifted_to_3d_objects_with_their_labels(camera):
    mug = ((0.45, 0.1, 0.05), (0.06, 0.06, 0.10))
    block = ((0.55, -0.1, 0.02), (0.04, 0.04, 0.04))
    rgb, depth = syn.render(camera, [syn.Box(*mug, (217, 26, 26)),
                                     syn.Box(*block, (26, 64, 230))])
    boxes = [Box2D("mug", 0.9, _bbox(camera, *mug)), Box2D("block", 0.8, _bbox(camera, *block)),
             Box2D("mug", 0.3, _bbox(camera, *mug))]  # a weaker duplicate of the mug
    det = FixedBoxes(boxes)
    pipe = PerceptionPipeline(camera, config=PerceptionConfig(stride=1), detector=det,
                              queries=("mug", "block"))
    scene = pipe.process(rgb, depth, stamp=1.0)
    assert det.queries == ["mug", "block"]
    assert set(scene.ids()) == {"red_mug", "blue_block"}
    red = scene.get("red_mug")
    assert red.label == "red mug" and red.colour == "red"
    assert math.dist(red.position, mug[0]) < 0.01
    assert scene.get("blue_block").shape == "block"


def test_box_over_bare_table_gives_no_object(camera):
    rgb, depth = syn.render(camera, [])
    pipe = PerceptionPipeline(camera, detector=FixedBoxes([Box2D("mug", 0.9, (100, 100, 140,
                                                                              140))]))
    assert pipe.process(rgb, depth, stamp=1.0).objects == ()


def test_non_max_suppression_keeps_the_best_of_overlapping_boxes():
    a = Box2D("mug", 0.9, (0, 0, 10, 10))
    b = Box2D("cup", 0.5, (1, 1, 11, 11))
    c = Box2D("mug", 0.4, (50, 50, 60, 60))
    assert non_max_suppression([b, c, a], 0.5) == [a, c]


def _tiny_owlv2(tmp_path):
    """OWLv2 built from a config (random weights) with a hand-made character-level tokenizer."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    chars = "abcdefghijklmnopqrstuvwxyz"
    vocab = {c: i for i, c in enumerate(chars)}
    vocab.update({c + "</w>": len(chars) + i for i, c in enumerate(chars)})
    vocab["<|startoftext|>"] = len(vocab)  # OWL masks queries whose first id is 0
    vocab["<|endoftext|>"] = len(vocab)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    tok = transformers.CLIPTokenizer(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"),
                                     pad_token="<|endoftext|>")
    bos, eos = vocab["<|startoftext|>"], vocab["<|endoftext|>"]
    cfg = transformers.Owlv2Config(
        text_config={"vocab_size": len(vocab), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 1, "num_attention_heads": 2,
                     "max_position_embeddings": 16, "bos_token_id": bos, "eos_token_id": eos,
                     "pad_token_id": eos},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                       "num_attention_heads": 2, "image_size": 64, "patch_size": 16},
        projection_dim=32)
    torch.manual_seed(0)
    model = transformers.Owlv2ForObjectDetection(cfg)
    image_processor = transformers.Owlv2ImageProcessorPil(size={"height": 64, "width": 64})
    processor = transformers.Owlv2Processor(image_processor=image_processor, tokenizer=tok)
    return model, processor


def test_owlv2_backend_returns_labelled_boxes_inside_the_image(tmp_path, camera):
    model, processor = _tiny_owlv2(tmp_path)
    detector = Owlv2Detector(model, processor, threshold=0.0, max_boxes=5)
    rgb, depth = syn.render(camera, [syn.Box((0.5, 0.0, 0.02), (0.04, 0.04, 0.04),
                                             (26, 64, 230))])
    boxes = detector.detect(rgb, ["block", "bowl"])
    assert 0 < len(boxes) <= 5
    for b in boxes:
        assert b.label in ("block", "bowl") and 0.0 <= b.score <= 1.0
        x0, y0, x1, y1 = b.box
        assert 0 <= x0 < x1 <= rgb.shape[1] - 1 and 0 <= y0 < y1 <= rgb.shape[0] - 1
    with pytest.raises(PerceptionError):
        detector.detect(rgb, [" "])
    # The same backend behind the pipeline: a Scene comes out (random weights: any content).
    pipe = PerceptionPipeline(camera, detector=detector, queries=("block", "bowl"))
    scene = pipe.process(rgb, depth, stamp=0.5)
    assert all(o.shape in ("block", "bowl") for o in scene.objects)


def test_owlv2_checkpoint_loads_from_a_local_directory_only(tmp_path):
    model, processor = _tiny_owlv2(tmp_path)
    ckpt = tmp_path / "owlv2"
    model.save_pretrained(ckpt)
    processor.save_pretrained(ckpt)
    loaded = Owlv2Detector.from_pretrained(ckpt, threshold=0.3)
    assert loaded.threshold == 0.3
    with pytest.raises(ConfigError):
        Owlv2Detector.from_pretrained(tmp_path / "missing")
    with pytest.raises(ConfigError):
        Owlv2Detector(model, processor, threshold=2.0)
