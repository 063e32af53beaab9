"""ROS adapter for the memory store (HIMM): the ``frankenbot_memory`` node.

Services (relative names: under ``--namespace arm1`` they are /arm1/frankenbot/memory/...)
  /frankenbot/memory/get_context (frankenbot_interfaces/srv/GetContext)
      skills, exemplar episodes and anomaly experience for a planning prompt, within a budget.
  /frankenbot/memory/record_episode (frankenbot_interfaces/srv/RecordEpisode)
      store one finished task; the response names any skills it promoted.
  /frankenbot/memory/list_skills (frankenbot_interfaces/srv/ListSkills)
      the library, optionally filtered by a substring of name or description.

Parameters (``frankenbot.memory.config.MemoryConfig``: types, ranges, defaults; all read at
start-up)
  db_path (string, "" = <user data dir>/frankenbot/memory.sqlite3), db_url (string,
  sqlite:///path | postgresql://user@host:port/db: a memory shared by a fleet), robot_id (string,
  "" = this node's namespace), fixtures (comma-separated fixture ids of this robot), seed_dir
  (string, "" = the package's skills/), load_seeds (bool), min_support (int, k),
  min_success_rate (double, r), min_pattern_length (int), max_pattern_length (int),
  token_budget (int), max_exemplars (int), use_embeddings (bool), embedding_model_dir (string).

All logic lives in ``frankenbot.memory``; the store is thread-safe, so the services share a
reentrant callback group under a multi-threaded executor. The embedding model loads on a
background thread at start-up; until it is ready retrieval is lexical (reported in the response).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from frankenbot.errors import FrankenbotError
from frankenbot.memory.config import MemoryConfig
from frankenbot.memory.store import MemoryStore
from frankenbot.nodes.memory_msgs import episode_from_request, skill_msg
from frankenbot.nodes.parameters import NodeSettings
from frankenbot.nodes.spin import run_node
from frankenbot_interfaces.srv import GetContext, ListSkills, RecordEpisode


class MemoryNode(Node):
    """Serves the memory store over ROS; see the module docstring for the interface."""

    def __init__(self) -> None:
        super().__init__("frankenbot_memory")
        config = NodeSettings(self, MemoryConfig).value
        if not config.robot_id:
            config = replace(config, robot_id=self.get_namespace().strip("/"))
        self.store = MemoryStore.open(config=config)
        if self.store.read_only:
            self.get_logger().error(
                f"memory database {self.store.where} is read-only: context is served, episodes "
                f"are refused ({self.store.read_only})")
        for problem in self.store.seed_problems:
            self.get_logger().warning(f"seed skills: {problem}")
        if config.use_embeddings:
            self.store.model_threads = 1  # this process only embeds single sentences
            self.store.start_loading_embedder()
        group = ReentrantCallbackGroup()
        self.create_service(GetContext, "frankenbot/memory/get_context",
                            self.get_context_callback, callback_group=group)
        self.create_service(RecordEpisode, "frankenbot/memory/record_episode",
                            self.record_episode_callback, callback_group=group)
        self.create_service(ListSkills, "frankenbot/memory/list_skills",
                            self.list_skills_callback, callback_group=group)
        self.get_logger().info(
            f"memory at {self.store.where} ({self.store.dialect}) for robot"
            f" {config.robot_id or '(unnamed)'}: {len(self.store.list_skills())} skills,"
            f" {self.store.episode_count()} episodes")

    def get_context_callback(self, request: Any, response: Any) -> Any:
        try:
            ctx = self.store.get_context(request.instruction, int(request.token_budget),
                                         int(request.max_exemplars) or -1)
        except FrankenbotError as e:
            self.get_logger().error(f"get_context failed: {e}")
            response.retrieval = f"error: {e}"
            return response
        response.skills = [skill_msg(s) for s in ctx.skills]
        response.exemplar_instructions = [e.instruction for e in ctx.exemplars]
        response.exemplar_programs = [e.program for e in ctx.exemplars]
        response.anomaly_experience = list(ctx.experience)
        response.tokens = ctx.tokens
        response.retrieval = ctx.retrieval
        return response

    def record_episode_callback(self, request: Any, response: Any) -> Any:
        try:
            result = self.store.record_episode(episode_from_request(request))
        except FrankenbotError as e:
            self.get_logger().error(f"episode {request.task_id} not stored: {e}",
                                    throttle_duration_sec=2.0)
            response.ok = False
            response.message = str(e)
            return response
        response.ok = True
        response.episode_id = result.episode_id
        response.promoted_skills = list(result.promoted)
        response.message = result.message or (
            f"recorded episode {result.episode_id}"
            + (f"; promoted {', '.join(result.promoted)}" if result.promoted else ""))
        if result.promoted:
            self.get_logger().info(f"promoted skills: {', '.join(result.promoted)}")
        return response

    def list_skills_callback(self, request: Any, response: Any) -> Any:
        try:
            response.skills = [skill_msg(s) for s in self.store.list_skills(request.filter)]
        except FrankenbotError as e:
            self.get_logger().error(f"list_skills failed: {e}")
        return response

    def destroy_node(self) -> None:
        self.store.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(MemoryNode, num_threads=4, args=args, callbacks_block=False)


if __name__ == "__main__":
    sys.exit(main())
