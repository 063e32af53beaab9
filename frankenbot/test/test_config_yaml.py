"""Every shipped YAML file parses with no key given twice (YAML keeps the last one silently:
sim.yaml once turned the physics thread's SCHED_FIFO back on two lines below switching it off)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

CONFIG = Path(__file__).resolve().parents[1] / "config"


class _UniqueKeys(yaml.SafeLoader):
    pass


def _mapping(loader: _UniqueKeys, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen = set()
    for key_node, _value in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} given twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


_UniqueKeys.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


@pytest.mark.parametrize("path", sorted(CONFIG.rglob("*.yaml")), ids=lambda p: p.name)
def test_no_key_is_given_twice(path):
    yaml.load(path.read_text(), Loader=_UniqueKeys)


def test_the_check_catches_a_repeated_key():
    with pytest.raises(yaml.constructor.ConstructorError, match="given twice"):
        yaml.load("a:\n  b: 0\n  b: 50\n", Loader=_UniqueKeys)
