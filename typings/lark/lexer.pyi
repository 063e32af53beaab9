# lark 1.3 types itself inline, but the lark-stubs package (lark-parser 0.12, which
# ros-rosidl-parser requires) describes lark 0.x and wins over them: lark is untyped here.
from typing import Any

def __getattr__(name: str) -> Any: ...
