"""MkDocs hooks of the documentation site (mkdocs.yml: `hooks:`).

`<!-- rustdoc-example: PATH N -->` on a line of its own is replaced by the
N-th (1-based) fenced code example of the `//!` / `///` doc comments of the
Rust file PATH (relative to the repository root), as a `rust` code block:
the comment markers are stripped and rustdoc's hidden lines (`# ...`) left
out, so the page shows the code `cargo test` compiles and runs. A missing
file or example fails the build.
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MARKER = re.compile(r"^<!-- rustdoc-example: (\S+) (\d+) -->$", re.M)
_DOC_LINE = re.compile(r"^\s*//[!/] ?(.*)$")
_RUST_TAGS = {"", "rust", "no_run", "should_panic"}


def rustdoc_examples(path):
    """The code of each fenced example in the doc comments of `path`."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    examples, current = [], None
    for line in lines:
        m = _DOC_LINE.match(line)
        if m is None:
            current = None
            continue
        text = m.group(1)
        if text.startswith("```"):
            if current is None:
                tokens = {t.strip() for t in text[3:].split(",")}
                # A Rust example (compiled by `cargo test`), or False: another
                # kind of block (text, ignore, ...), skipped.
                current = [] if tokens <= _RUST_TAGS else False
            else:
                if current is not False:
                    examples.append("\n".join(current))
                current = None
            continue
        if current is not None and current is not False:
            if text == "#" or text.startswith("# "):
                continue
            current.append(text)
    return examples


def _replace(match):
    from mkdocs.exceptions import PluginError  # here: the docs tests import this module without MkDocs

    path, n = match.group(1), int(match.group(2))
    try:
        examples = rustdoc_examples(path)
    except OSError as e:
        raise PluginError(f"rustdoc-example: cannot read {path}: {e}") from e
    if not 1 <= n <= len(examples):
        raise PluginError(f"rustdoc-example: {path} has {len(examples)} examples, not {n}")
    return "```rust\n" + examples[n - 1] + "\n```"


def on_page_markdown(markdown, page, config, files):
    return _MARKER.sub(_replace, markdown)
