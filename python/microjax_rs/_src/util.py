"""Small utilities at the paths JAX's documentation imports them from."""
import functools


def safe_map(f, *args):
    """`map` that requires all argument lists to have equal length."""
    args = list(map(list, args))
    n = len(args[0])
    for arg in args[1:]:
        if len(arg) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(map(f, *args))


def safe_zip(*args):
    """`zip` that requires equal lengths."""
    args = list(map(list, args))
    n = len(args[0])
    for arg in args[1:]:
        if len(arg) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(zip(*args))


def unzip2(pairs):
    xs, ys = [], []
    for x, y in pairs:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


def wraps(wrapped):
    """`functools.wraps` for transformations of arbitrary callables: a callable
    whose `__name__` (or another copied attribute) cannot be copied, such as
    a module object whose attribute lookup gives a non-string, still gets
    wrapped, keeping `__wrapped__` (JAX's wrappers never fail on this)."""

    def decorate(wrapper):
        try:
            functools.update_wrapper(wrapper, wrapped)
        except (AttributeError, TypeError):
            try:
                wrapper.__wrapped__ = wrapped
            except AttributeError:
                pass
        return wrapper

    return decorate


def subvals(lst, replace):
    """`lst` as a tuple with the `(index, value)` pairs of `replace` substituted."""
    out = list(lst)
    for i, v in replace:
        out[i] = v
    return tuple(out)


def tuple_update(t, i, v):
    """`t` as a tuple with entry `i` replaced by `v`."""
    return tuple(t[:i]) + (v,) + tuple(t[i + 1:])
