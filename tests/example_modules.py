"""Loads the scripts under examples/ as modules, so tests run their code."""
import importlib.util
import os

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "examples")


def load_example(name):
    """The module of `examples/<name>.py` (its `main()` is not run)."""
    spec = importlib.util.spec_from_file_location(f"{name}_example", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
