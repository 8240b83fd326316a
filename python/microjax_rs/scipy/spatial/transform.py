"""`jax.scipy.spatial.transform`: `Rotation` (unit quaternions, scalar
last, `(4,)` for one rotation or `(N, 4)` for a stack) and `Slerp`. Both are
NamedTuples, so they are pytrees that pass through `jit`, `vmap` and `grad`.
"""
import re
import typing

import numpy as _np

from ... import numpy as jnp
from ..._src.numpy.util import _aval, _promote_dtypes_inexact


def _q(quat, i):
    return quat[..., i]


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalize(quat):
    return quat / _norm(quat)[..., None]


def _compose(p, q):
    """The quaternion of the rotation `q` followed by `p`."""
    px, py, pz, pw = (_q(p, i) for i in range(4))
    qx, qy, qz, qw = (_q(q, i) for i in range(4))
    return jnp.stack([pw * qx + qw * px + (py * qz - pz * qy),
                      pw * qy + qw * py + (pz * qx - px * qz),
                      pw * qz + qw * pz + (px * qy - py * qx),
                      pw * qw - px * qx - py * qy - pz * qz], axis=-1)


def _as_matrix(quat):
    x, y, z, w = (_q(quat, i) for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    rows = [[x2 - y2 - z2 + w2, 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), -x2 + y2 - z2 + w2, 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), -x2 - y2 + z2 + w2]]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m):
    """Shepperd's method: build the quaternion from the largest of the
    diagonal entries and the trace, then normalize."""
    m = jnp.asarray(m)
    d = [m[..., i, i] for i in range(3)]
    trace = d[0] + d[1] + d[2]
    choice = jnp.argmax(jnp.stack(d + [trace], axis=-1), axis=-1)
    cands = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        comp = [None] * 4
        comp[i] = 1 - trace + 2 * m[..., i, i]
        comp[j] = m[..., j, i] + m[..., i, j]
        comp[k] = m[..., k, i] + m[..., i, k]
        comp[3] = m[..., k, j] - m[..., j, k]
        cands.append(jnp.stack(comp, axis=-1))
    cands.append(jnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                            m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
    quat = cands[3]
    for i in range(3):
        quat = jnp.where((choice == i)[..., None], cands[i], quat)
    return _normalize(quat)


def _from_rotvec(rotvec, degrees):
    rotvec = jnp.asarray(rotvec)
    if degrees:
        rotvec = jnp.deg2rad(rotvec)
    angle = _norm(rotvec)
    a2 = angle * angle
    small = 0.5 - a2 / 48 + a2 * a2 / 3840
    large = jnp.sin(angle / 2) / jnp.where(angle <= 1e-3, 1.0, angle)
    scale = jnp.where(angle <= 1e-3, small, large)
    return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], axis=-1)


def _as_rotvec(quat, degrees):
    quat = jnp.where((_q(quat, 3) < 0)[..., None], -quat, quat)  # 0 <= angle <= pi
    angle = 2.0 * jnp.arctan2(_norm(quat[..., :3]), _q(quat, 3))
    a2 = angle * angle
    small = 2 + a2 / 12 + 7 * a2 * a2 / 2880
    large = angle / jnp.sin(jnp.where(angle <= 1e-3, 1.0, angle) / 2)
    scale = jnp.where(angle <= 1e-3, small, large)
    if degrees:
        scale = jnp.rad2deg(scale)
    return scale[..., None] * quat[..., :3]


def _from_mrp(mrp):
    mrp = jnp.asarray(mrp)
    s = jnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return jnp.concatenate([2 * mrp[..., :3], 2 - s], axis=-1) / s


def _as_mrp(quat):
    sign = jnp.where(_q(quat, 3) < 0, -1.0, 1.0)
    return (sign / (1.0 + sign * _q(quat, 3)))[..., None] * quat[..., :3]


def _canonical(quat):
    neg, zero = quat < 0, quat == 0
    flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0]) | (zero[..., 3] & zero[..., 0] & neg[..., 1])
            | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
    return jnp.where(flip[..., None], -quat, quat)


def _check_seq(seq, exact3):
    n = len(seq)
    if exact3 and n != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    if not exact3 and (n < 1 or n > 3):
        raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}")
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(n - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return intrinsic, ["xyz".index(c) for c in seq.lower()]


def _elementary(axis, angle):
    zero = jnp.zeros_like(angle)
    comps = [zero, zero, zero, jnp.cos(angle / 2)]
    comps[axis] = jnp.sin(angle / 2)
    return jnp.stack(comps, axis=-1)


def _euler_from_quat(quat, axes, extrinsic, degrees):
    """Bernardes & Viollet's direct quaternion-to-Euler conversion (2022)."""
    if not extrinsic:
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = float((i - j) * (j - k) * (k - i) // 2)
    eps = 1e-7
    qw = _q(quat, 3)
    if symmetric:
        a, b, c, d = qw, _q(quat, i), _q(quat, j), _q(quat, k) * sign
    else:
        a, b = qw - _q(quat, j), _q(quat, i) + _q(quat, k) * sign
        c, d = _q(quat, j) + qw, _q(quat, k) * sign - _q(quat, i)
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    degenerate_zero = jnp.abs(middle) <= eps
    degenerate_pi = jnp.abs(middle - _np.pi) <= eps
    regular = ~degenerate_zero & ~degenerate_pi
    first_idx, third_idx = (0, 2) if extrinsic else (2, 0)
    # degenerate cases: all of the rotation in angle 0, the other outer angle 0
    angle0 = jnp.where(degenerate_zero, 2 * half_sum, 2 * half_diff * (-1.0 if extrinsic else 1.0))
    outer = {0: angle0, 2: jnp.zeros_like(middle)}
    first = jnp.where(regular, half_sum - half_diff, outer[first_idx])
    third = jnp.where(regular, half_sum + half_diff, outer[third_idx])
    angles = {first_idx: first, third_idx: third}
    if not symmetric:
        angles[third_idx] = angles[third_idx] * sign
        middle = middle - _np.pi / 2
    out = jnp.stack([angles[0], middle, angles[2]], axis=-1)
    out = jnp.remainder(out + _np.pi, 2 * _np.pi) - _np.pi
    return jnp.rad2deg(out) if degrees else out


class Rotation(typing.NamedTuple):
    """A rotation, or a stack of rotations, as unit quaternions `(x, y, z, w)`.

    Construct with `from_quat`, `from_matrix`, `from_rotvec`, `from_euler`,
    `from_mrp`, `identity` or `concatenate`; compose with `*` (`p * q`
    applies `q` first); `apply` rotates vectors."""

    quat: typing.Any

    @classmethod
    def concatenate(cls, rotations):
        return cls(jnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """From Euler angles about the axes of `seq` ('xyz' extrinsic, 'XYZ'
        intrinsic; 1 to 3 axes, angles of shape `(..., len(seq))` or one per
        axis)."""
        intrinsic, axes = _check_seq(seq, exact3=False)
        (angles,) = _promote_dtypes_inexact(jnp.atleast_1d(jnp.asarray(angles)))
        if len(axes) == 1 and _aval(angles).shape[-1] != 1:
            angles = angles[..., None]
        if degrees:
            angles = jnp.deg2rad(angles)
        quat = _elementary(axes[0], angles[..., 0])
        for n, axis in enumerate(axes[1:], start=1):
            step = _elementary(axis, angles[..., n])
            quat = _compose(quat, step) if intrinsic else _compose(step, quat)
        return cls(quat)

    @classmethod
    def from_matrix(cls, matrix):
        (matrix,) = _promote_dtypes_inexact(jnp.asarray(matrix))
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp):
        (mrp,) = _promote_dtypes_inexact(jnp.asarray(mrp))
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat):
        (quat,) = _promote_dtypes_inexact(jnp.asarray(quat))
        return cls(_normalize(quat))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        (rotvec,) = _promote_dtypes_inexact(jnp.asarray(rotvec))
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation (only a single one, `num=None`, as JAX)."""
        assert num is None
        return cls(jnp.asarray([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key, num=None):
        """Not implemented (as in JAX)."""
        raise NotImplementedError()

    def __getitem__(self, indexer):
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len().")
        return _aval(self.quat).shape[0]

    def __mul__(self, other):
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse=False):
        """The rotated `vectors` (`(3,)` or `(N, 3)`, broadcast against the
        rotations); `inverse` applies the inverse rotation."""
        m = self.as_matrix()
        if inverse:
            m = jnp.swapaxes(m, -1, -2)
        return jnp.sum(m * jnp.asarray(vectors)[..., None, :], axis=-1)

    def as_euler(self, seq, degrees=False):
        intrinsic, axes = _check_seq(seq, exact3=True)
        return _euler_from_quat(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self):
        return _as_matrix(self.quat)

    def as_mrp(self):
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees=False):
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical=False, scalar_first=False):
        quat = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(quat, 1, axis=-1) if scalar_first else quat

    def inv(self):
        return Rotation(self.quat * jnp.asarray([-1, -1, -1, 1], dtype=_aval(self.quat).dtype_name))

    def magnitude(self):
        """The rotation angle(s) in [0, pi]."""
        return 2.0 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(_q(self.quat, 3)))

    def mean(self, weights=None):
        """The (weighted) chordal L2 mean: the top eigenvector of
        `sum_i w_i q_i q_iᵀ`."""
        dt = _aval(self.quat).dtype_name
        w = jnp.ones(_aval(self.quat).shape[0], dtype=dt) if weights is None else jnp.asarray(weights, dtype=dt)
        if _aval(w).ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {_aval(w).shape}.")
        if _aval(w).shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number of rotations, got "
                             f"{_aval(w).shape[0]} values and {len(self)} rotations.")
        K = jnp.matmul(w[None, :] * self.quat.T, self.quat)
        _, v = jnp.linalg.eigh(K)
        return Rotation(v[:, -1])

    @property
    def single(self):
        return _aval(self.quat).ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation between key rotations at increasing
    key times; build with `Slerp.init(times, rotations)` and call with
    times (a scalar gives a single rotation)."""

    times: typing.Any
    timedelta: typing.Any
    rotations: Rotation
    rotvecs: typing.Any

    @classmethod
    def init(cls, times, rotations):
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=_aval(rotations.quat).dtype_name)
        if _aval(times).ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got "
                             f"{_aval(times).ndim} dimensions.")
        if _aval(times).shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of timestamps given, got "
                             f"{len(rotations)} rotations and {_aval(times).shape[0]} timestamps.")
        quat = rotations.as_quat()
        starts = Rotation(quat[:-1])
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts,
                   rotvecs=(starts.inv() * Rotation(quat[1:])).as_rotvec())

    def __call__(self, times):
        t = jnp.asarray(times, dtype=_aval(self.times).dtype_name)
        if _aval(t).ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = _aval(t).ndim == 0
        t = jnp.atleast_1d(t)
        ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return result[0] if single else result


__all__ = ["Rotation", "Slerp"]
