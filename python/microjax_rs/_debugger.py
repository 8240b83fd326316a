"""`jax.debug.breakpoint`: an interactive debugger entered at a point of a
(possibly transformed) program, with the live values of the traced locals.

The frames above the call are captured when it is traced; their traced
locals (tracer leaves of each local's pytree) are the operands of one
`debug_callback`, so the debugger runs when the program does (eagerly, under
`jit`, once per member under `vmap`, on primal values under `grad`) and sees
them as arrays; other locals are kept as they were. The debugger is the
highest-priority registered one (or `backend=`); the built-in `cli` backend
is JAX's `jdb` command loop, reading `stdin=` / writing `stdout=` when given.
"""
import cmd
import inspect
import os
import pprint
import sys
import threading
import traceback

from . import core
from ._callback import debug_callback
from .tree_util import tree_flatten, tree_unflatten

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class DebuggerFrame:
    """One Python frame as the debugger shows it: `filename`, `locals`,
    `globals`, `code_context`, `source` (the lines of its function),
    `lineno` and `offset` (the current line's index in `source`, or None)."""

    __slots__ = ("filename", "locals", "globals", "code_context", "source", "lineno", "offset")

    def __init__(self, filename, locals, globals, code_context, source, lineno, offset):  # noqa: A002
        self.filename, self.locals, self.globals = filename, locals, globals
        self.code_context, self.source, self.lineno, self.offset = code_context, source, lineno, offset

    @classmethod
    def from_frameinfo(cls, info):
        """The frame of an `inspect.FrameInfo`, with its function's source."""
        try:
            lines, start = inspect.getsourcelines(info.frame)
            source = "".join(lines).split("\n")
            offset = info.lineno - max(start, 1)
            if offset >= len(source):
                source, offset = [], None
        except (OSError, TypeError):
            source, offset = [], None
        return cls(info.filename, dict(info.frame.f_locals), {}, info.code_context, source, info.lineno, offset)


def _split_locals(frames):
    """(tracer leaves of all frames' locals, a function rebuilding the frames
    from their runtime values)."""
    dynamic, plans = [], []
    for fr in frames:
        plan = []
        for name, value in fr.locals.items():
            try:
                leaves, tree = tree_flatten(value)
            except Exception:  # noqa: BLE001 - an unflattenable local stays as it is
                plan.append((name, value, None, None))
                continue
            mask = [isinstance(x, core.Tracer) for x in leaves]
            if not any(mask):
                plan.append((name, value, None, None))
                continue
            dynamic.extend(x for x, m in zip(leaves, mask) if m)
            plan.append((name, leaves, tree, mask))
        plans.append(plan)

    def rebuild(values):
        it = iter(values)
        out = []
        for fr, plan in zip(frames, plans):
            local = {}
            for name, value, tree, mask in plan:
                if tree is None:
                    local[name] = value
                else:
                    leaves = [core.to_array(next(it)) if m else x for x, m in zip(value, mask)]
                    local[name] = tree_unflatten(tree, leaves)
            out.append(DebuggerFrame(fr.filename, local, fr.globals, fr.code_context, fr.source,
                                     fr.lineno, fr.offset))
        return out

    return dynamic, rebuild


# ------------------------------------------------------------ debugger registry

_debuggers = {}  # name -> (priority, debugger)
_lock = threading.Lock()


def register_debugger(name, debugger, priority):
    """Registers `debugger(frames, thread_id, **kwargs)` under `name`; the
    highest priority is the default backend."""
    if name in _debuggers:
        raise ValueError(f'Debugger with name "{name}" already registered.')
    _debuggers[name] = (priority, debugger)


def get_debugger(backend=None):
    """The debugger named `backend`, else the highest-priority one."""
    if backend is not None and backend in _debuggers:
        return _debuggers[backend][1]
    if not _debuggers:
        raise ValueError("No debuggers registered!")
    return max(_debuggers.values(), key=lambda pd: pd[0])[1]


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False, token=None,  # noqa: A001
               **kwargs):
    """Enters the debugger (JAX's `jax.debug.breakpoint`) where the program
    reaches this call, with the values its traced locals have then.

    `backend` picks a registered debugger (default: the highest priority; the
    built-in `cli` one reads commands `p`, `pp`, `up`, `down`, `list`,
    `where`, `continue`, `quit` or expressions); `filter_frames` hides
    microjax_rs' own frames; `num_frames` keeps that many frames above the
    call; `kwargs` go to the debugger (the `cli` one takes `stdin`,
    `stdout`). With `token` (a pytree of arrays) the breakpoint runs once the
    token is computed and the token is returned (pass it on, or the
    breakpoint is removed with the unused value); `ordered` and `token` are
    mutually exclusive. Returns None without a token."""
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    infos = inspect.stack()[1:]
    if filter_frames:
        infos = [i for i in infos if not os.path.abspath(i.filename).startswith(_PACKAGE_DIR + os.sep)]
    if num_frames is not None:
        infos = infos[:num_frames]
    frames = [DebuggerFrame.from_frameinfo(i) for i in infos]
    del infos
    dynamic, rebuild = _split_locals(frames)

    def run_debugger(*values):
        thread_id = None
        if threading.current_thread() is not threading.main_thread():
            thread_id = threading.get_ident()
        debugger = get_debugger(backend=backend)
        with _lock:
            debugger(rebuild(values), thread_id, **kwargs)

    if token is None:
        debug_callback(run_debugger, *dynamic, ordered=ordered)
        return None
    from . import lax
    from ._callback import pure_callback
    from .core import get_aval
    from .interpreters.partial_eval import ShapeDtypeStruct
    from .tree_util import tree_map

    token, dynamic = lax.stop_gradient((token, dynamic))
    shapes = tree_map(lambda x: ShapeDtypeStruct(get_aval(x).shape, get_aval(x).dtype), token)

    def with_token(tok, *values):
        run_debugger(*values)
        return tok

    return pure_callback(with_token, shapes, token, *dynamic)


# ------------------------------------------------------------ the `cli` backend


class CliDebugger(cmd.Cmd):
    """JAX's `jdb` text debugger over captured frames."""

    prompt = "(jdb) "

    def __init__(self, frames, thread_id, stdin=None, stdout=None, completekey="tab"):
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.frame_index = 0
        self.thread_id = thread_id
        self.intro = "Entering jdb:"

    def _say(self, text):
        print(text, file=self.stdout)

    def current_frame(self):
        """The frame commands look at (`up` / `down` move it)."""
        return self.frames[self.frame_index]

    def evaluate(self, expr):
        """`expr` evaluated over the current frame's globals and locals."""
        frame = self.current_frame()
        env = {**frame.globals, **frame.locals}
        return eval(expr, {}, env)  # noqa: S307 - an interactive debugger evaluates what it is given

    def _error_message(self):
        kind, value = sys.exc_info()[:2]
        self._say("*** " + traceback.format_exception_only(kind, value)[-1].strip())

    def _show(self, expr, fmt):
        try:
            self._say(fmt(self.evaluate(expr)))
        except Exception:  # noqa: BLE001 - reported to the user, as a debugger does
            self._error_message()

    def default(self, line):
        """An expression: evaluates and prints it."""
        self._show(line, repr)

    def do_p(self, arg):
        """p expression: evaluates and prints the value of an expression."""
        self._show(arg, repr)

    def do_pp(self, arg):
        """pp expression: evaluates and pretty-prints the value of an expression."""
        self._show(arg, pprint.pformat)

    def print_context(self, num_lines=2):
        """The current frame's location and the source lines around it."""
        frame = self.current_frame()
        lines = [f"> {frame.filename}({frame.lineno})"]
        if frame.offset is not None:
            for i, text in enumerate(frame.source):
                if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                    lines.append(("->  " if i == frame.offset else "    ") + text)
        self._say("\n".join(lines))

    def print_backtrace(self):
        """The frames, most recent last."""
        lines = ["Traceback:"]
        for frame in reversed(self.frames):
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    <no source>" if frame.offset is None else f"    {frame.source[frame.offset].strip()}")
        self._say("\n".join(lines))

    def do_up(self, _arg):
        """u(p): moves up a stack frame."""
        if self.frame_index == len(self.frames) - 1:
            self._say("At topmost frame.")
        else:
            self.frame_index += 1
        self.print_context()

    def do_down(self, _arg):
        """d(own): moves down a stack frame."""
        if self.frame_index == 0:
            self._say("At bottommost frame.")
        else:
            self.frame_index -= 1
        self.print_context()

    def do_list(self, _arg):
        """l(ist): the source around the current line."""
        self.print_context(num_lines=5)

    def do_continue(self, _arg):
        """c(ont(inue)): continues the program."""
        return True

    def do_quit(self, _arg):
        """q(uit) / exit: exits the program."""
        sys.exit(0)

    def do_where(self, _arg):
        """w(here) / bt: the stack trace, most recent frame last."""
        self.print_backtrace()

    do_u, do_d, do_l = do_up, do_down, do_list
    do_c = do_cont = do_continue
    do_q = do_EOF = do_exit = do_quit
    do_w = do_bt = do_where

    def run(self):
        """The command loop, until `continue`."""
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


def run_cli_debugger(frames, thread_id, **kwargs):
    """The `cli` backend: runs `CliDebugger` over `frames`."""
    CliDebugger(frames, thread_id, **kwargs).run()


register_debugger("cli", run_cli_debugger, -1)
