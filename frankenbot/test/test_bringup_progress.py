"""Terminal progress: one line per change, each anomaly event once per outcome."""

from frankenbot.bringup.progress import EventView, ProgressPrinter


def _event(outcome: str, latency: float = -1.0) -> EventView:
    return EventView("3", "grasp_lost", 1, "handler dropped", outcome, latency, "dropped")


def test_progress_prints_changes_only():
    out: list[str] = []
    p = ProgressPrinter(write=out.append)
    p.update(phase="planning", vlm_calls=0)
    p.update(phase="executing", active_path="main/1", active_node="pick(obj=red_block)",
             active_line=4, vlm_calls=0)
    p.update(phase="executing", active_path="main/1", active_node="pick(obj=red_block)",
             active_line=4, vlm_calls=0)
    p.update(phase="executing", vlm_calls=1)
    assert out == ["[phase] planning", "[phase] executing",
                   "  > pick(obj=red_block)   (line 4, main/1)", "  VLM calls so far: 1"]


def test_an_event_is_printed_again_only_when_its_outcome_changes():
    out: list[str] = []
    p = ProgressPrinter(write=out.append)
    p.update(events=[_event("pending")])
    p.update(events=[_event("pending")])
    p.update(events=[_event("recovered", 0.012)])
    assert len(out) == 2
    assert "grasp_lost" in out[0] and "tier 1 (coded)" in out[0] and "[pending]" in out[0]
    assert "[recovered, 12 ms to recovery command]" in out[1]
