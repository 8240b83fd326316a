"""A Griffe extension for the documentation site's API pages (mkdocs.yml).

Griffe, inspecting the imported package, turns a name of a public module
whose object was defined in another module into an alias of the defining
module's name. Many of ours cannot be resolved that way: functions made by
factories (qualified names with `<locals>`), objects exported under a second
name (`jnp.abs` of `absolute`), callable instances (`jnp.add`, a
`jnp.ufunc`), NumPy's own objects re-exported. So in a public module every
name that is not a module or a class is inspected in place, from the
imported object (classes stay aliases, resolved as Griffe does).

Griffe also merges the package's `.pyi` stubs into what it inspected, and a
stub's declaration carries no docstring: a member of a public module left
without one takes the imported object's `__doc__` (so docstrings made at
import, from tables, appear too).

Doctest examples (`>>>` lines and the output after them, up to a blank line)
are put in `pycon` code blocks, so Markdown shows them as code.

Line numbers serve source links, which the pages do not show; looking them
up (`inspect.getsourcelines` for each object) is most of the inspection
time, so each module is inspected without its source lines.
"""
import inspect
import sys

from griffe import Docstring, Extension, LinesCollection


def _public(path):
    return not any(part.startswith("_") for part in path.split("."))


def _modules(module):
    yield module
    for member in module.members.values():
        if not member.is_alias and member.is_module and _public(member.path):
            yield from _modules(member)


def fence_doctests(text):
    """`text` with each doctest block (a `>>>` line and the non-blank lines after it) fenced."""
    out, lines, k = [], text.split("\n"), 0
    while k < len(lines):
        line = lines[k]
        stripped = line.lstrip()
        if not (stripped.startswith(">>> ") or stripped == ">>>"):
            out.append(line)
            k += 1
            continue
        indent = line[: len(line) - len(stripped)]
        out.append(indent + "```pycon")
        while k < len(lines) and lines[k].strip():
            out.append(lines[k])
            k += 1
        out.append(indent + "```")
    return "\n".join(out)


def _documented(obj):
    yield obj
    for member in obj.members.values():
        if not member.is_alias and not member.is_module:
            yield from _documented(member)


class PublicNamesInPlace(Extension):
    def on_module_node(self, *, node, agent, **kwargs):
        agent.lines_collection = LinesCollection()

    def on_alias_instance(self, *, alias, node, agent, **kwargs):
        if not _public(agent.current.path):
            return
        for child in node.children:
            if child.name == alias.name:
                if not (child.is_module or child.is_class):
                    agent.inspect(child)
                return

    def on_package(self, *, pkg, **kwargs):
        for module in _modules(pkg):
            runtime = sys.modules.get(module.path)
            if runtime is None:
                continue
            for name, member in module.members.items():
                if member.is_alias or member.is_module or member.docstring is not None:
                    continue
                value = getattr(runtime, name, None)
                doc = getattr(value, "__doc__", None)
                # A callable's own text, not a generic parent class's (as tools/docstring_coverage.py
                # counts: a callable instance may carry its text on a class of its own).
                own = callable(value) and (isinstance(value, type) or not any(
                    doc is getattr(cls, "__doc__", None) for cls in type(value).__mro__[1:]))
                if own and isinstance(doc, str) and doc.strip():
                    member.docstring = Docstring(inspect.cleandoc(doc), parent=member)
            for obj in _documented(module):
                if obj.docstring is not None and ">>>" in obj.docstring.value:
                    obj.docstring.value = fence_doctests(obj.docstring.value)
