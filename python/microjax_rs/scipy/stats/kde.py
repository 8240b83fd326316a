"""`jax.scipy.stats.gaussian_kde`: kernel density estimation with Gaussian kernels."""
import numpy as _np

from ... import numpy as jnp
from ... import random as _random
from ...tree_util import register_pytree_node_class as _register
from .. import linalg as _linalg
from .. import special as _special
from ._dist import inexact_dtypes as inexact
from ..special import ndtr

__all__ = ["gaussian_kde"]


def _weighted_cov(data, w):
    """np.cov(data, aweights=w, bias=False) for rows of variables, weights summing to 1."""
    mean = jnp.sum(data * w, axis=1, keepdims=True)
    centred = data - mean
    fact = 1.0 - jnp.sum(w * w)
    return jnp.atleast_2d((centred * w) @ centred.T / fact)


@_register
class gaussian_kde:
    """A Gaussian KDE of `dataset` (d x n, or n points of one dimension),
    bandwidth by Scott's or Silverman's rule, a scalar, or a callable."""

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if jnp.issubdtype(dataset.dtype, _np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            dataset, weights = inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights ** 2))
        bw_method = "scott" if bw_method is None else bw_method
        if bw_method == "scott":
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_cov = _weighted_cov(dataset, weights)
        data_inv_cov = jnp.linalg.inv(data_cov)
        self._set("covariance", data_cov * factor ** 2)
        self._set("inv_cov", data_inv_cov / factor ** 2)

    def _set(self, name, value):
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        kde = cls.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"), children):
            kde._set(name, value)
        return kde

    @property
    def d(self):
        return self.dataset.shape[0]

    @property
    def n(self):
        return self.dataset.shape[1]

    def evaluate(self, points):
        """The density at `points` (d x m)."""
        points = self._reshape_points(points)
        return _kernel_eval(False, self.dataset.T, self.weights[:, None], points.T, self.inv_cov)[:, 0]

    __call__ = evaluate

    def pdf(self, x):
        return self.evaluate(x)

    def logpdf(self, x):
        """The log density at `x` (a logsumexp over the kernels)."""
        x = self._reshape_points(x)
        return _kernel_eval(True, self.dataset.T, self.weights[:, None], x.T, self.inv_cov)[:, 0]

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times a Gaussian of `mean` and `cov`."""
        mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean)))
        cov = jnp.atleast_2d(jnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = _linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (jnp.sqrt(2 * _np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        return _convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low, high):
        """The mass of [low, high] (one-dimensional data)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if _np.ndim(low) != 0 or _np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        lo = jnp.squeeze((low - self.dataset) / sigma)
        hi = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (ndtr(hi) - ndtr(lo)))

    def integrate_kde(self, other):
        """The integral of the product of two KDEs."""
        from ... import vmap
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = _linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (jnp.sqrt(2 * _np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        sm, lg = (self, other) if self.n < other.n else (other, self)
        result = vmap(lambda m: _convolve(chol, norm, lg.dataset, lg.weights, m), in_axes=1)(sm.dataset)
        return jnp.sum(result * sm.weights)

    def resample(self, key, shape=()):
        """Draws: a data point chosen by weight plus a kernel-covariance normal."""
        ind_key, eps_key = _random.split(key)
        ind = _random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = _random.multivariate_normal(eps_key, jnp.zeros(self.d, self.covariance.dtype), self.covariance,
                                          shape=shape, dtype=self.dataset.dtype).T
        return self.dataset[:, ind] + eps

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points):
        points = jnp.atleast_2d(jnp.asarray(points))
        if jnp.issubdtype(points.dtype, _np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _convolve(chol, norm, target, weights, mean):
    diff = target - mean[:, None]
    alpha = _linalg.cho_solve(chol, diff)
    arg = 0.5 * jnp.sum(diff * alpha, axis=0)
    return norm * jnp.sum(jnp.exp(-arg) * weights)


def _kernel_eval(in_log, points, values, xi, precision):
    points, values, xi, precision = inexact(points, values, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = _linalg.cholesky(precision, lower=True)
    points = points @ whitening
    xi = xi @ whitening
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * _np.log(2 * _np.pi)
    # (m, n) squared distances between the evaluation points and the data
    sq = jnp.sum(jnp.square(xi[:, None, :] - points[None, :, :]), axis=-1)
    arg = log_norm - 0.5 * sq
    if in_log:
        return _special.logsumexp(jnp.log(values[:, 0])[None, :] + arg, axis=1)[:, None]
    return jnp.sum(values[:, 0][None, :] * jnp.exp(arg), axis=1)[:, None]
