"""The tutorial pages of the documentation site run as tests.

Every ```` ```python ```` cell of each page under docs/guide/ (and the home
page, docs/index.md) runs, in page order, in one namespace per page; a cell
that raises fails the page. A cell followed directly by a ```` ```text ````
block must print exactly that text (trailing whitespace aside).

The pages' Rust includes are checked too: each `--8<--` snippet names an
existing file, and each `<!-- rustdoc-example: PATH N -->` marker names an
existing doc-comment example (the code `cargo test` compiles). The API pages
(docs/api/) name every public module whose docstrings tests/test_docstrings.py
counts, and `tree_util` and `export`.
"""
import contextlib
import importlib.util
import io
import os
import re
import traceback

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
GUIDE = os.path.join(DOCS, "guide")

# The tutorials the site must have (their order in mkdocs.yml's nav).
TUTORIALS = ["quickstart.md", "transformations.md", "pytrees.md", "control-flow.md",
             "custom-derivatives.md", "distributed.md", "export.md", "rust.md"]
PAGES = ["index.md"] + [os.path.join("guide", name) for name in TUTORIALS]

_FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def cells(text):
    """[(python source, expected output or None, line number)] of a page."""
    blocks = [(m.group(1), m.group(2), m.start(), m.end()) for m in _FENCE.finditer(text)]
    out = []
    for k, (lang, body, start, end) in enumerate(blocks):
        if lang != "python":
            continue
        expected = None
        if k + 1 < len(blocks):
            nlang, nbody, nstart, _ = blocks[k + 1]
            if nlang == "text" and not text[end:nstart].strip():
                expected = nbody
        out.append((body, expected, text.count("\n", 0, start) + 2))
    return out


def _normalize(s):
    return "\n".join(line.rstrip() for line in s.strip("\n").splitlines())


def _read(page):
    with open(os.path.join(DOCS, page), encoding="utf-8") as fh:
        return fh.read()


def test_tutorial_set():
    """The guide holds exactly the listed tutorials, each with Python cells (the Rust page: Rust)."""
    assert sorted(os.listdir(GUIDE)) == sorted(TUTORIALS)
    for page in PAGES:
        if page != os.path.join("guide", "rust.md"):
            assert cells(_read(page)), f"{page} has no python cell"


@pytest.mark.parametrize("page", PAGES)
def test_page_cells(page):
    text = _read(page)
    namespace = {"__name__": "docs_" + re.sub(r"\W", "_", page)}
    for n, (source, expected, line) in enumerate(cells(text), 1):
        buf = io.StringIO()
        try:
            code = compile(source, f"{page}:{line}", "exec")
            with contextlib.redirect_stdout(buf):
                exec(code, namespace)
        except Exception:
            pytest.fail(f"{page}: cell {n} (line {line}) raised:\n{traceback.format_exc()}", pytrace=False)
        if expected is not None:
            assert _normalize(buf.getvalue()) == _normalize(expected), (
                f"{page}: cell {n} (line {line}) printed something else than the page shows")


def _hooks():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", os.path.join(ROOT, "tools", "mkdocs_hooks.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rust_includes():
    """Every Rust include of the pages resolves, and the Rust page shows the crate's examples."""
    hooks = _hooks()
    found = 0
    for page in PAGES:
        text = _read(page)
        for path in re.findall(r'^--8<-- "([^"]+)"$', text, re.M):
            assert os.path.isfile(os.path.join(ROOT, path)), f"{page}: no file {path}"
            found += 1
        for path, n in re.findall(r"^<!-- rustdoc-example: (\S+) (\d+) -->$", text, re.M):
            examples = hooks.rustdoc_examples(path)
            assert 1 <= int(n) <= len(examples), f"{page}: {path} has no example {n}"
            assert "microjax" in examples[int(n) - 1]
            found += 1
    assert found >= 3


def test_rustdoc_example_extraction(tmp_path):
    """Doc-comment markers and hidden lines are stripped; non-Rust blocks are skipped."""
    hooks = _hooks()
    src = ("//! Text.\n//! ```text\n//! not code\n//! ```\n//! ```\n//! let a = 1;\n"
           "//! # Ok::<(), ()>(())\n//! ```\nfn f() {}\n/// ```rust,no_run\n/// f();\n/// ```\n")
    path = tmp_path / "lib.rs"  # absolute: os.path.join(ROOT, path) is path
    path.write_text(src, encoding="utf-8")
    assert hooks.rustdoc_examples(str(path)) == ["let a = 1;", "f();"]


def test_api_pages_cover_the_public_modules():
    spec = importlib.util.spec_from_file_location("docstring_coverage", os.path.join(ROOT, "tools", "docstring_coverage.py"))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    wanted = {"microjax_rs.tree_util", "microjax_rs.export"}
    for group, names in tool.GROUPS.items():
        wanted.update(names if names is not None else [m for m in tool.scipy_modules() if m != "microjax_rs.scipy"])
    shown = set()
    api = os.path.join(DOCS, "api")
    for name in os.listdir(api):
        with open(os.path.join(api, name), encoding="utf-8") as fh:
            shown.update(re.findall(r"^::: (\S+)$", fh.read(), re.M))
    assert sorted(wanted - shown) == []
