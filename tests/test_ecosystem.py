"""optax, chex and equinox on microjax_rs through `microjax_rs.install_as_jax()`.

Each library program (tests/ecosystem_programs.py) runs in a subprocess, so the
`jax` alias the switch installs never reaches this test session: every other
test imports microjax_rs directly and sees no `jax` module. The programs'
numbers are compared with values recorded from the same script run on JAX
0.10.2 (jaxlib 0.10.2, optax 0.2.8, chex 0.1.92, equinox 0.13.8, NumPy 2.4.6)
on CPU, float32.

The libraries come from requirements-ecosystem.txt, which `make` installs into
.venv (pip --no-deps, so no real jax). Without them these tests skip.
"""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import microjax_rs

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(microjax_rs.__file__)))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PACKAGE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop("MICROJAX_FAKE_GPU", None)  # the programs run on the CPU
    return env


def _python(code):
    """Run `code` in a fresh interpreter; its stdout."""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    return r.stdout


def _run_program(name):
    r = subprocess.run([sys.executable, os.path.join(HERE, "ecosystem_programs.py"), name, "--microjax"],
                       capture_output=True, text=True, env=_env(), timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _need(*libs):
    missing = [lib for lib in libs if importlib.util.find_spec(lib) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: `pip install --no-deps -r requirements-ecosystem.txt` "
                    "(make test does)")


# ---------------------------------------------------------------- the switch

def test_real_jax_is_not_installed():
    # The environment has no real jax/jaxlib: only the switch provides `jax`.
    out = _python(
        "import importlib.util, sys\n"
        "print(importlib.util.find_spec('jax') is None, importlib.util.find_spec('jaxlib') is None,"
        " 'jax' in sys.modules)\n")
    assert out.split() == ["True", "True", "False"]
    out = _python(
        "import microjax_rs, sys\n"
        "jax = microjax_rs.install_as_jax()\n"
        "import jax as j2, jax.numpy, jax.lax, jax.tree_util, jax.random, jax.nn, jax.scipy.special\n"
        "import jax.typing, jax.experimental, jax.extend.core, jax.interpreters.ad, jax._src.traceback_util\n"
        "print(j2 is jax, jax.__version__, jax.__version_info__ == (0, 10, 2))\n"
        "print(jax.numpy is microjax_rs.numpy, jax.lax is microjax_rs.lax, jax.jit is microjax_rs.jit)\n"
        "print(sys.modules['jax.scipy.special'] is microjax_rs.scipy.special,"
        " jax._src.traceback_util is microjax_rs._src.traceback_util)\n"
        "print(microjax_rs.numpy.__spec__.name, 'jaxlib' in sys.modules)\n")
    lines = [line.split() for line in out.splitlines()]
    assert lines[0] == ["True", "0.10.2", "True"]
    assert lines[1] == ["True", "True", "True"]
    assert lines[2] == ["True", "True"]
    assert lines[3] == ["microjax_rs.numpy", "False"]  # module specs stay microjax_rs's


def test_switch_is_idempotent_missing_modules_and_uninstall():
    out = _python(
        "import microjax_rs, sys\n"
        "a = microjax_rs.install_as_jax(); b = microjax_rs.install_as_jax()\n"
        "import jax\n"
        "print(a is b is jax, sum(type(f).__name__ == '_JaxFinder' for f in sys.meta_path))\n"
        "try:\n    import jax.no_such_module\nexcept ModuleNotFoundError as e:\n    print('missing', e.name)\n"
        "try:\n    jax.no_such_attribute\nexcept AttributeError:\n    print('no attribute')\n"
        "microjax_rs.uninstall_as_jax()\n"
        "print(microjax_rs.is_installed_as_jax(), [n for n in sys.modules if n == 'jax' or n.startswith('jax.')])\n"
        "try:\n    import jax\nexcept ModuleNotFoundError:\n    print('gone')\n")
    assert out.splitlines() == ["True 1", "missing jax.no_such_module", "no attribute", "False []", "gone"]


def test_switch_refuses_when_real_jax_is_imported():
    out = _python(
        "import sys, types, microjax_rs\n"
        "sys.modules['jax'] = types.ModuleType('jax')  # stands for an imported real jax\n"
        "try:\n    microjax_rs.install_as_jax()\nexcept RuntimeError as e:\n"
        "    print('refused', 'already imported' in str(e))\n"
        "print(microjax_rs.is_installed_as_jax())\n")
    assert out.split() == ["refused", "True", "False"]


# ---------------------------------------------------------------- optax

OPTAX_LOSSES = [1.0316470861434937, 1.0316470861434937, 0.9987410306930542, 0.9380940198898315, 0.8594816327095032, 0.772986114025116, 0.6839402914047241, 0.6069756746292114, 0.5379359722137451, 0.4766724109649658, 0.4239981770515442, 0.3798291087150574, 0.3432340621948242, 0.3132047653198242, 0.2889639139175415, 0.26986342668533325, 0.2552396059036255, 0.2443591207265854, 0.23642978072166443, 0.2306278645992279]
OPTAX_FINAL_LOSS = 0.22611993551254272
OPTAX_LRS = [0.0, 0.030000001192092896, 0.05000000074505806, 0.038750000298023224, 0.005491678602993488]
OPTAX_GLOBAL_NORM = 4.160310745239258
OPTAX_PARAMS = {
    'b1': [0.15322764217853546, -0.1479324847459793, 0.04239017143845558, -0.2541673481464386, -0.17117708921432495, -0.27763962745666504, 0.27559155225753784, -0.28792738914489746],
    'b2': [-0.1692708283662796, 0.3858708441257477, -0.33492496609687805],
    'w1': [0.827155351638794, -0.5732141733169556, 0.04704414680600166, -0.7688040137290955, 0.0583672896027565, -0.8772191405296326, 0.9433274865150452, -0.692410409450531, 0.019880961626768112, 0.43237626552581787, 0.9387022852897644, -0.20630329847335815, 0.41292107105255127, 0.4032834768295288, 0.34800273180007935, -0.08908388763666153, -0.4503501057624817, -0.30735069513320923, -0.5264078378677368, 0.5605922937393188, -0.7941925525665283, -0.09623398631811142, -0.2599620819091797, 0.6237508058547974, 0.5078702569007874, -0.6752294301986694, -0.18521088361740112, -0.6848183274269104, -0.5059152245521545, -0.36234912276268005, 0.233433336019516, -0.5118563175201416],
    'w2': [0.21630336344242096, 0.1756259948015213, -0.6272822022438049, 0.23452238738536835, -0.8625844120979309, 0.5798196792602539, 1.0373246669769287, -0.26919469237327576, 0.36118510365486145, -0.6823666095733643, 0.04842988774180412, 1.0266449451446533, 0.5578626394271851, -0.3534705340862274, -0.1575213372707367, 0.2962150573730469, -0.4786275327205658, 0.661003053188324, 0.500277578830719, -0.22566813230514526, -0.8699726462364197, -0.4998086094856262, 0.028511131182312965, 0.6950512528419495],
}


def test_optax_adamw_clip_schedule_matches_jax():
    _need("optax")
    out = _run_program("optax_loop")
    # Recorded from JAX 0.10.2 on CPU (float32).
    np.testing.assert_allclose(out["lrs"], OPTAX_LRS, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(out["losses"], OPTAX_LOSSES, rtol=2e-5)
    np.testing.assert_allclose(out["final_loss"], OPTAX_FINAL_LOSS, rtol=2e-5)
    np.testing.assert_allclose(out["global_norm"], OPTAX_GLOBAL_NORM, rtol=2e-5)
    assert sorted(out["params"]) == sorted(OPTAX_PARAMS)
    for k, v in OPTAX_PARAMS.items():
        np.testing.assert_allclose(out["params"][k], v, rtol=1e-4, atol=2e-6, err_msg=k)
    assert out["losses"][-1] < 0.25 * out["losses"][0]


# ---------------------------------------------------------------- chex

CHEX_RESULTS = {'failures': ['assert_shape', 'assert_type', 'assert_rank', 'assert_trees_all_close', 'assert_tree_all_finite'], 'doubled_w': [2.0, 4.0, 6.0, 8.0], 'leaves': 2, 'grad_is_params': 'Params', 'grad_w': [-0.32712939381599426, -0.05247235670685768, 0.32714608311653137, 0.05247235670685768], 'grad_b': [-0.32712605595588684, -0.05247235670685768], 'replaced_b': [0.0, 0.0], 'traced': [3.0, -3.0, 1.5, 6.0]}


def test_chex_assertions_and_dataclass_match_jax():
    _need("chex")
    out = _run_program("chex_checks")
    # Recorded from JAX 0.10.2 on CPU (float32).
    assert out["failures"] == CHEX_RESULTS["failures"]  # each bad assertion raised AssertionError
    assert out["grad_is_params"] == "Params" and out["leaves"] == 2
    for k in ("doubled_w", "replaced_b", "traced"):
        assert out[k] == CHEX_RESULTS[k], k
    for k in ("grad_w", "grad_b"):
        np.testing.assert_allclose(out[k], CHEX_RESULTS[k], rtol=1e-5, atol=1e-6, err_msg=k)


# ---------------------------------------------------------------- equinox

EQX_LOSSES = [1.1692194938659668, 1.1303743124008179, 1.094801902770996, 1.0620310306549072, 1.0313528776168823, 1.0027791261672974, 0.9761426448822021, 0.9512308835983276, 0.9282394051551819, 0.9066343307495117]
EQX_PREDICTION = [-0.5368943214416504, 0.3575935363769531, 0.013510182499885559]
EQX_INIT_FIRST = [-0.21728003025054932, 0.2880972623825073, -0.1024165153503418, 0.4236232042312622, -0.1997920274734497, -0.4595087766647339]
EQX_INIT_SUMS = [0.9926358461380005, -0.5027731657028198, 2.100331455701962, -0.3862092662602663, -1.1694134017452598, 0.2410857081413269]
EQX_FINAL_SUMS = [0.9302711170166731, -0.40080699138343334, 2.4914004718884826, -0.23901508376002312, -1.169413351919502, 0.2410856932401657]
EQX_FINAL_NORMS = [1.6327164990445489, 0.7891428907971755, 1.646312423841709, 0.6148186770734395, 1.0411915226662132, 0.21117642765910638]


def test_equinox_mlp_training_matches_jax():
    _need("equinox", "jaxtyping")
    out = _run_program("equinox_mlp")
    # Recorded from JAX 0.10.2 on CPU (float32). The initial weights come from
    # jax.random (same bits as JAX) through eqx.nn.Linear's uniform init.
    np.testing.assert_allclose(out["init_leaves"][0][:6], EQX_INIT_FIRST, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose([np.sum(leaf) for leaf in out["init_leaves"]], EQX_INIT_SUMS, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["losses"], EQX_LOSSES, rtol=2e-5)
    np.testing.assert_allclose([np.sum(leaf) for leaf in out["final_leaves"]], EQX_FINAL_SUMS, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose([np.linalg.norm(leaf) for leaf in out["final_leaves"]], EQX_FINAL_NORMS, rtol=1e-5)
    np.testing.assert_allclose(out["prediction"], EQX_PREDICTION, rtol=1e-4, atol=1e-6)


def test_no_jax_alias_in_this_session():
    # The switch ran only in subprocesses: this session's `jax` is unset.
    assert "jax" not in sys.modules
    assert not microjax_rs.is_installed_as_jax()
