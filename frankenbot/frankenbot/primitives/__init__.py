"""FrankenBot primitives: the whitelisted robot operations programs call.

PrimitiveResult, CancelToken and the PrimitiveExecutor port live in ``frankenbot.ports``.

  primitives  Primitives: home, detect, move_above, pick, place_on, place_in, place_at, push_to,
              open_drawer, close_drawer, open_gripper, close_gripper, wait
  config      heights, widths and speeds of the primitives; the drawer fixture
  factory     build_primitives(robot): everything wired from the shipped config
"""
