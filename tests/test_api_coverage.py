"""The API coverage table (tools/api_coverage.py) against JAX 0.10.2's public
names (tools/jax_api_names.json, recorded from the real JAX): every name
microjax_rs lacks carries a tag (tools/api_tags.py), no tag outlives the gap
it explains, and no module's coverage falls below its floor."""
import fnmatch
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import api_coverage  # noqa: E402
import api_tags  # noqa: E402

# What these tests check does not depend on the default device (conftest.py).
pytestmark = pytest.mark.device_independent

# Coverage floors (present / names not owned elsewhere or exempt); raised as
# the surface grows, so a name that disappears fails here.
FLOORS = {
    "jax": 1.0, "jax.Array": 1.0, "jax.numpy": 1.0, "jax.numpy.linalg": 1.0, "jax.lax": 1.0,
    "jax.lax.linalg": 1.0, "jax.nn": 1.0, "jax.nn.initializers": 1.0, "jax.random": 1.0, "jax.tree_util": 1.0,
    "jax.tree": 1.0, "jax.dtypes": 1.0, "jax.ops": 1.0, "jax.image": 1.0, "jax.scipy.special": 1.0,
    "jax.scipy.linalg": 1.0, "jax.scipy.stats": 1.0, "jax.scipy.stats.<distribution>": 1.0,
    "jax.scipy.signal": 1.0, "jax.scipy.optimize": 1.0, "jax.scipy.sparse.linalg": 1.0,
}


@pytest.fixture(scope="module")
def rows():
    return api_coverage.compare()


@pytest.fixture(scope="module")
def grouped(rows):
    return api_coverage.grouped(rows)


def test_recorded_names_are_jax_0_10_2():
    with open(api_coverage.NAMES_FILE) as f:
        names = json.load(f)
    assert names["__version__"] == "0.10.2"
    assert len(names["jax.numpy"]) == 414 and "einsum" in names["jax.numpy"]


def test_every_missing_name_is_tagged(rows):
    untagged = [full for row in rows.values() for full, tag in row[4] if tag is None]
    assert untagged == []


def test_no_tag_outlives_its_gap(rows):
    missing = [full for row in rows.values() for full, _ in row[4]]
    stale = [p for p, kind, _ in api_tags._ENTRIES
             if p != "jax.*" and not any(fnmatch.fnmatchcase(m, p) for m in missing)]
    assert stale == []


def test_tags_are_known_kinds():
    assert {kind for _, kind, _ in api_tags._ENTRIES} <= {"owned", "exempt", "todo"}
    assert all(why for _, _, why in api_tags._ENTRIES)


@pytest.mark.parametrize("module", sorted(FLOORS))
def test_coverage_floor(grouped, module):
    assert api_coverage.coverage(grouped[module]) >= FLOORS[module]


def test_table_lists_every_module(rows):
    text = api_coverage.table(rows)
    assert "| `jax.numpy` | 414 |" in text
    assert "jax.scipy.stats.<distribution>" in text
    assert "| `jax.scipy.stats.norm`" not in text  # folded into the distribution row
