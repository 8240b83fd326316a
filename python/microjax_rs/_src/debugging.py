"""Text rendering of an array's sharding (`jax.debug.visualize_sharding`).

The picture is JAX's uncoloured one (what `rich` prints when the output is
not a colour terminal): a grid of boxes drawn with box characters, one per
distinct piece of the array, each labelled with the platform and the ids of
the devices holding it ("CPU 0,1"). Box sizes follow JAX's rule: an array is
drawn `10 * scale` lines high and 2.5 times as wide as the shape's aspect
ratio says, each piece in proportion to its extent, within
`[min_width, max_width]` characters.
"""


def _chunk(size, slc):
    """Which piece along one dimension `slc` is (0 for a whole dimension)."""
    if slc.start is None and slc.stop is None:
        return 0
    return slc.start // (slc.stop - slc.start)


def _extent(size, slc):
    """The fraction of a dimension of `size` the slice covers."""
    return 1.0 if slc.stop is None else (slc.stop - slc.start) / size


def sharding_cells(shape, sharding, scale=1.0, min_width=9, max_width=80):
    """The grid JAX draws: `{(row, col): (label, width, height or None)}`,
    `width` the text width of the box, `height` its lines (None: one line,
    for a 1-d array)."""
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    base_height = int(10 * scale)
    aspect = (shape[1] if len(shape) == 2 else 1) / shape[0]
    base_width = int(base_height * aspect)
    kind = next(iter(sharding.device_set)).platform.upper()
    devices, sizes = {}, {}
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        index = tuple(slice(i, i + 1) if isinstance(i, int) else i for i in index)
        key = tuple(_chunk(n, s) for n, s in zip(shape, index))
        if len(shape) == 1:
            key = (0,) + key
            sizes[key] = (_extent(shape[0], index[0]), None)
        else:
            sizes[key] = (_extent(shape[1], index[1]), _extent(shape[0], index[0]))
        devices.setdefault(key, set()).add(device.id)
    cells = {}
    for key, ids in devices.items():
        label = f"{kind} " + ",".join(str(i) for i in sorted(ids))
        width_frac, height_frac = sizes[key]
        width = min(max(int(width_frac * base_width * 2.5), min_width), max_width)
        height = None if height_frac is None else int(height_frac * base_height)
        cells[key] = (label, width, height)
    return cells


def render_sharding(shape, sharding, scale=1.0, min_width=9, max_width=80):
    """The uncoloured text JAX prints for `visualize_sharding(shape,
    sharding)` (lines joined by newlines, a trailing newline)."""
    cells = sharding_cells(shape, sharding, scale, min_width, max_width)
    rows = max(r for r, _ in cells) + 1
    cols = max(c for _, c in cells) + 1
    padded = {}  # (row, col) -> (top, left, label, right, bottom)
    for key, (label, width, height) in cells.items():
        left, extra = divmod(width - len(label) - 2, 2)
        right = left + extra
        if height is None:
            top = bottom = 0
        else:
            top, extra = divmod(height - 2, 2)
            bottom = top + extra
        padded[key] = (max(top, 0), max(left, 0), label, max(right, 0), max(bottom, 0))
    col_width = [max(p[1] + len(p[2]) + p[3] for (r, c), p in padded.items() if c == j) for j in range(cols)]
    lines = ["┌" + "┬".join("─" * w for w in col_width) + "┐"]
    for i in range(rows):
        blocks = []
        for j in range(cols):
            top, left, label, right, bottom = padded[i, j]
            inner = col_width[j] - left - right
            before = (inner - len(label)) // 2
            text = " " * (left + before) + label + " " * (col_width[j] - left - before - len(label))
            blocks.append([" " * col_width[j]] * top + [text] + [" " * col_width[j]] * bottom)
        height = max(len(b) for b in blocks)
        for k in range(height):
            lines.append("│" + "│".join(b[k] if k < len(b) else " " * col_width[j]
                                         for j, b in enumerate(blocks)) + "│")
        if i + 1 < rows:
            lines.append("├" + "┼".join("─" * w for w in col_width) + "┤")
    lines.append("└" + "┴".join("─" * w for w in col_width) + "┘")
    return "\n".join(lines) + "\n"
