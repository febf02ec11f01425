"""Actions on waveforms: time warp (speaking rate) and pitch shift.

Mroueh et al. 2015, §6 (TIDIGITS): templates "pitch shifted up and down by 400
cents and warped to play at half and double speed". Both actions here are
linear maps of the waveform, applied to a whole batch at once.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.signal

from ..utils.validation import check_int
from .base import Group
from .distributions import Discrete, Distribution

__all__ = ["TimeWarp", "PitchShift"]


def _check_dist(dist, name, kind):
    if not isinstance(dist, Distribution):
        raise TypeError(f"{name} must be a Distribution; got {dist!r}")
    dist.check_kind(kind)
    # Discrete.check_kind cannot know the sign its values need (ImageScaling checks the same)
    if kind == "multiplicative" and isinstance(dist, Discrete) and min(dist.values) <= 0:
        raise ValueError(f"{name} values must be positive; got {dist.values}")
    return dist


def _interp_weights(pos, L):
    """Each position's left neighbour, its fraction past it and whether the left / right neighbours lie in a row of
    ``L`` samples: the linear interpolation that :func:`_interp_rows` applies and ``TimeWarp`` transposes."""
    i0 = np.floor(pos).astype(np.int64)
    return i0, pos - i0, (i0 >= 0) & (i0 < L), (i0 + 1 >= 0) & (i0 + 1 < L)


def _interp_rows(X, pos):
    """Linear interpolation of every row of X (n, L) at fractional positions ``pos`` (L',), zero outside."""
    L = X.shape[1]
    i0, f, ok0, ok1 = _interp_weights(pos, L)
    f = f.astype(X.dtype)
    a = np.where(ok0, X[:, np.clip(i0, 0, L - 1)], 0)
    b = np.where(ok1, X[:, np.clip(i0 + 1, 0, L - 1)], 0)
    return (1 - f) * a + f * b


class TimeWarp(Group):
    """Play a waveform ``rate`` times faster: ``(g_a x)(t) = sqrt(a) · x(a t)``.

    The ``sqrt(a)`` factor is the 1-D analogue of Lemma 2.1 (``|J|^{-1/2}``), so
    energy is kept in continuous time (``is_unitary_in_continuum``), not on the samples of a fixed frame
    (``is_unitary`` is False: what leaves the frame is lost, and a speed-up resamples without a prefilter).
    Time runs from the start of the row, so a slowed-down word is cut at the end of the frame.

    The signal between samples is interpolated linearly and zero outside the row.

    Parameters
    ----------
    n_samples : int
        Length of the waveforms (rows), >= 2.
    rate : Distribution
        Law of the factor a > 0 (a multiplicative parameter), e.g. ``LogUniform(0.5, 2)``
        (symmetric) or ``Uniform(0.5, 2)`` (Mroueh et al.'s "half and double speed" as a
        uniform range, not symmetric).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import LogUniform, TimeWarp
    >>> group = TimeWarp(8, rate=LogUniform(0.5, 2.0))
    >>> group.sample(3, random_state=0).shape
    (3, 1)
    >>> x = np.arange(8.0).reshape(1, 8)
    >>> Y = group.act(x, [[2.0], [0.5]])  # double speed, half speed
    >>> Y.shape
    (2, 1, 8)
    >>> (Y[0, 0] / np.sqrt(2.0)).round(3).tolist()  # x(2t): the end leaves the frame
    [0.0, 2.0, 4.0, 6.0, 0.0, 0.0, 0.0, 0.0]
    >>> (Y[1, 0] / np.sqrt(0.5)).round(3).tolist()  # x(t / 2), interpolated linearly
    [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    """

    def __init__(self, n_samples, rate):
        self.n_samples = check_int(n_samples, "n_samples", min_value=2)
        self.rate = _check_dist(rate, "rate", "multiplicative")

    def _repr_args(self):
        return f"n_samples={self.n_samples}, rate={self.rate!r}"

    @property
    def n_features(self):
        return self.n_samples

    def _sample(self, n, rng):
        return np.asarray(self.rate.sample(n, rng), dtype=float)[:, None]

    def _unit_laws(self):
        return [self.rate]

    def _check_elements(self, E, name="elements"):
        E = super()._check_elements(E, name)
        if (E <= 0).any():
            raise ValueError(f"{name}: rates must be positive")
        return E

    def identity(self):
        return np.ones((1, 1))

    def inverse(self, E):
        return 1.0 / self._check_elements(E)

    def _act(self, X, E):
        t = np.arange(self.n_samples, dtype=float)
        # filled element by element in (r, n, L) order: the interpolation gathers columns (X[:, idx] comes out in
        # Fortran order) and np.stack kept that order, so the engine's and HaarKernel's reshape of the moved rows
        # into (r n, L) copied them whole, beside its budget (OrbitNystroem over 64 time warps of 784 samples: 9.6 MB
        # at 8 MB); a float64 scalar factor would promote float32 rows to float64 (NumPy 2)
        out = np.empty((len(E), len(X), self.n_samples), dtype=X.dtype)
        for k, a in enumerate(E[:, 0]):
            np.multiply(X.dtype.type(np.sqrt(a)), _interp_rows(X, a * t), out=out[k])
        return out

    #: the warp is a linear map of the samples (linear interpolation): its transpose is known
    has_adjoint = True

    def _act_adjoint(self, X, E):
        L = self.n_samples
        t = np.arange(L, dtype=float)
        out = np.empty((len(E), len(X), L), dtype=X.dtype)
        for k, a in enumerate(E[:, 0]):
            # W[t, i0] = sqrt(a) (1 - f), W[t, i0 + 1] = sqrt(a) f, neighbours outside the row dropped (_interp_rows)
            i0, f, ok0, ok1 = _interp_weights(a * t, L)
            cols = np.concatenate([i0, i0 + 1])
            vals = np.sqrt(a) * np.concatenate([1.0 - f, f])
            rows = np.concatenate([t, t]).astype(np.int64)
            ok = np.concatenate([ok0, ok1])
            W = sp.csr_matrix((vals[ok].astype(X.dtype), (rows[ok], cols[ok])), shape=(L, L))
            out[k] = np.asarray(W.T @ X.T).T  # (W^T x for every row)
        return out

    # energy is kept in continuous time only: linear interpolation without a prefilter and the fixed frame
    # (a rate of 0.5 kept 52 % of a frame-filling signal) made <x, g^{-1} t> far from <g x, t> (kernel ratios
    # 0.64-1.59): the defaults are exact (the data side, or the transposes: act_adjoint), the g^{-1} template side
    # an explicit action="templates"
    is_unitary = False
    is_unitary_in_continuum = True

    @property
    def is_symmetric(self):
        return self.rate.is_symmetric("multiplicative")

    def commutes_with(self, other):
        return isinstance(other, TimeWarp)


class PitchShift(Group):
    """Shift the pitch of waveforms by ``cents`` without changing their duration.

    Implementation: short-time Fourier transform (Hann window of ``n_fft``
    samples, 75% overlap); bin k of the output takes bin round(k / 2^(cents/1200))
    of the input, with the phase advance between frames corrected to that of
    bin k; inverse STFT. The map is linear in the waveform, keeps the duration,
    moves a tone's frequency by the factor to within one bin (sample_rate/n_fft) for shifts
    up to ±700 cents (at most 0.65 bin for tones of 150-1900 Hz; at +1200 cents up to 1.1 bins,
    since the phase correction keeps the input's offset within its bin), and changes the norm
    by up to about 20% for ±400 cents, the energy by up to a third (0.5 s at 8 kHz,
    n_fft=512: the norm of a 440 Hz tone ×0.89 at -400 cents and ×1.03 at +400, of white noise
    ×0.81 and ×0.94; a downward shift leaves empty the output bins whose source
    would lie above the Nyquist frequency). It is only approximately unitary and
    only approximately a group action, so ``is_unitary`` is False and orbit
    features apply it on the data side; GICDF applies it to its templates by
    definition (Mroueh et al. 2015, §2).

    Parameters
    ----------
    n_samples : int
        Length of the waveforms (rows), >= 2.
    cents : Distribution
        Law of the shift in cents (additive), e.g. ``Uniform(-400, 400)``.
    n_fft : int, default=512
        STFT window length (frequency resolution sample_rate / n_fft), 8 <= n_fft <= n_samples.

    Examples
    --------
    Half a second of a 440 Hz tone at 8 kHz, shifted up by 400 cents (a major third, to 554 Hz):

    >>> import numpy as np
    >>> from orbitkernels.groups import PitchShift, Uniform
    >>> rate = 8000
    >>> x = np.sin(2 * np.pi * 440 * np.arange(4000) / rate)[None]
    >>> group = PitchShift(4000, cents=Uniform(-400, 400))
    >>> Y = group.act(x, [[400.0]])
    >>> Y.shape  # the duration is kept
    (1, 1, 4000)
    >>> peak = np.fft.rfftfreq(4000, 1 / rate)[np.abs(np.fft.rfft(Y[0, 0])).argmax()]
    >>> bool(abs(peak - 440 * 2 ** (400 / 1200)) < rate / 512)  # within one STFT bin
    True
    >>> round(float(np.linalg.norm(Y[0, 0]) / np.linalg.norm(x)), 2)  # only about unitary
    1.03
    """

    def __init__(self, n_samples, cents, n_fft=512):
        self.n_samples = check_int(n_samples, "n_samples", min_value=2)
        self.cents = _check_dist(cents, "cents", "additive")
        self.n_fft = check_int(n_fft, "n_fft", min_value=8)
        if self.n_fft > self.n_samples:
            raise ValueError(f"n_fft={self.n_fft} is longer than the waveforms ({self.n_samples} samples)")

    def _repr_args(self):
        return f"n_samples={self.n_samples}, cents={self.cents!r}, n_fft={self.n_fft}"

    @property
    def n_features(self):
        return self.n_samples

    def _sample(self, n, rng):
        return np.asarray(self.cents.sample(n, rng), dtype=float)[:, None]

    def _unit_laws(self):
        return [self.cents]

    def identity(self):
        return np.zeros((1, 1))

    def inverse(self, E):
        return -self._check_elements(E)

    def _act(self, X, E):
        N = self.n_fft
        hop = N // 4
        _, _, Z = scipy.signal.stft(X, nperseg=N, noverlap=N - hop, boundary="zeros", padded=True)
        n_bins, n_frames = Z.shape[1], Z.shape[2]
        k = np.arange(n_bins)
        m = np.arange(n_frames)
        out = []
        for c in E[:, 0]:
            src = np.rint(k / 2.0 ** (c / 1200.0)).astype(np.int64)
            ok = src < n_bins
            # A sinusoid on bin j advances its phase by 2π j hop / N per frame; moved to
            # bin k it must advance by 2π k hop / N. The correction depends on (k, m)
            # only, never on the data, so the map stays linear.
            phase = np.exp(2j * np.pi * (k - src)[:, None] * hop * m[None, :] / N)
            Zs = np.where(ok[:, None], Z[:, np.minimum(src, n_bins - 1), :], 0) * phase
            _, y = scipy.signal.istft(Zs, nperseg=N, noverlap=N - hop, boundary=True)
            y = y[:, : self.n_samples]
            if y.shape[1] < self.n_samples:
                y = np.pad(y, ((0, 0), (0, self.n_samples - y.shape[1])))
            out.append(y)
        return np.stack(out).astype(X.dtype, copy=False)

    is_unitary = False

    @property
    def is_symmetric(self):
        return self.cents.is_symmetric("additive")

    def commutes_with(self, other):
        return isinstance(other, PitchShift)

