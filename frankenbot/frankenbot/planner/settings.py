"""The ``frankenbot_planner`` node's settings schema (``frankenbot.settings``): how plans are
made (``PlannerConfig``, with ``vlm.*``), the safety review, and how long the node waits for
its inputs. The node declares them as typed ROS parameters from here."""

from __future__ import annotations

from dataclasses import dataclass

from frankenbot import settings
from frankenbot.planner.planner import PlannerConfig
from frankenbot.planner.review import DEFAULT_REVIEW_MODE, REVIEW_MODES
from frankenbot.settings import section, setting


@dataclass(frozen=True)
class PlannerNodeSettings:
    planner: PlannerConfig = section(PlannerConfig, "")
    review: str = setting(DEFAULT_REVIEW_MODE, "safety review of every plan and replan: auto "
                          "(carries, stacks and pushes near objects; everything when zones are "
                          "configured) | always | never", choices=REVIEW_MODES, live=True)
    review_config: str = setting("review.yaml", "review thresholds and zones (a bare name: the "
                                 "package's config/)", live=True)
    use_image: bool = setting(True, "send perception's annotated image with the prompt",
                              live=True)
    scene_wait: float = setting(3.0, "wait for a fresh scene before planning", unit="s",
                                low=0.0, live=True)
    memory_timeout: float = setting(2.0, "wait for memory's services (planning works without)",
                                    unit="s", low=0.01, live=True)
    executor_wait: float = setting(5.0, "wait for the executor's action server", unit="s",
                                   low=0.0, live=True)
    execution_timeout: float = setting(900.0, "a task executing longer is cancelled", unit="s",
                                       low=1.0, live=True)
    stats_file: str = setting("", "append one JSON line of planning metrics per task ('' = "
                              "off)", live=True)

    def __post_init__(self) -> None:
        settings.validate(self, "frankenbot_planner")
