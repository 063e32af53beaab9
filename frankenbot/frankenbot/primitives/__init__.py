"""FrankenBot primitives: the whitelisted robot operations programs call.

PrimitiveResult, CancelToken and the PrimitiveExecutor port live in ``frankenbot.ports``.

  primitives          Primitives: home, detect, move_above, pick, push_to, open_gripper,
                      close_gripper, wait (and the handlers of the modules below)
  place_primitives    place_on, place_in (containers, supports, open drawers), place_at
  fixture_primitives  open_drawer, close_drawer, open_door, close_door (from the fixture map)
  control_primitives  press, toggle, turn
  targets             pixel targets and relative placements
  grasps              top-down antipodal grasp synthesis from an object's points
  shape_models        an object's top surface as points (perceived, or from its category)
  placement           release spots in containers, on supports, in open drawers
  config              heights, widths and speeds of the primitives
  factory             build_primitives(robot): everything wired from the shipped config
"""
