"""pytest plugin for tools/jax_suite.py: maps `jax` to microjax_rs before
JAX's test files are collected."""
import microjax_rs


def pytest_configure(config):
    microjax_rs.install_as_jax()
