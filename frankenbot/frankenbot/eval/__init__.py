"""Measurement: everything that scores the brain or composes it with the simulator to score it.

Nothing in the core (program, anomaly, execution, primitives, motion, perception, planner, memory)
imports this package; it imports whatever it measures.
"""
