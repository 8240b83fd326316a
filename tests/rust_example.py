"""Runs the core crate's `run_exported` example from the tests.

The example is built with the package set and features of `make test`'s
cargo-test stage (`-p microjax -p microjax-python --features microjax/cuda`,
profile `ci`): cargo resolves the dependencies' features as that stage did,
so the build is the one it already made (a no-op after it) instead of a
second compile of the core crate (`cargo run -p microjax` alone resolves
shared dependencies' features differently and recompiles everything).
"""
import json
import os
import subprocess
from shutil import which

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def have_cargo():
    return which("cargo") is not None


def run_exported(args, timeout=900):
    """`run_exported ARGS...`: the CompletedProcess (text output)."""
    build = subprocess.run(
        ["cargo", "build", "--profile", "ci", "-p", "microjax", "-p", "microjax-python",
         "--features", "microjax/cuda", "--example", "run_exported", "--message-format", "json"],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "PYO3_BUILD_EXTENSION_MODULE": "1"})
    assert build.returncode == 0, build.stderr
    exe = None
    for line in build.stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "run_exported":
            exe = msg.get("executable") or exe
    assert exe, "cargo reported no run_exported executable"
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
