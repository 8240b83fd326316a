"""tools/docstring_coverage.py: counts each public callable once per namespace
(re-exports deduplicated), tells a callable's own docstring from its class's,
and prints a table whose rows add up to the total."""
import importlib.util
import os
import re

import microjax_rs.numpy as jnp
import pytest

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tool():
    spec = importlib.util.spec_from_file_location(
        "docstring_coverage", os.path.join(ROOT, "tools", "docstring_coverage.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reexports_count_once():
    tool = _tool()
    assert jnp.linalg.matmul is jnp.matmul  # one object under two names
    _, total, _, _ = tool.coverage("numpy")
    names = sum(len(tool.public_callables(importlib.import_module(m))) for m in tool.GROUPS["numpy"])
    unique = {id(obj) for m in tool.GROUPS["numpy"] for _, obj in tool.public_callables(importlib.import_module(m))}
    assert total == len(unique) < names


def test_own_docstring_rule():
    tool = _tool()

    class Generic:
        """A generic callable."""

        def __call__(self):
            return 0

    class Specific(Generic):
        pass

    def bare():
        return 0

    own = Specific()
    own.__doc__ = "What this one computes."
    assert not tool.has_own_doc(Specific()) and tool.has_own_doc(own) and not tool.has_own_doc(bare)


def test_table_adds_up(capsys):
    tool = _tool()
    assert tool.main([]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\| (\w+) \| (\d+)/(\d+) \|", out, re.M)
    assert [r[0] for r in rows] == list(tool.GROUPS)
    total = re.search(r"\*\*total\*\* \| (\d+)/(\d+)", out)
    assert int(total.group(1)) == sum(int(r[1]) for r in rows)
    assert int(total.group(2)) == sum(int(r[2]) for r in rows) > 800
