"""Trial: the measurement-noise polish with Gaussian-moment contrasts corrected for the noise.

After ``cumulant_polish_trial.py`` (unbiased but too noisy): keep contrasts
as efficient as the polish's own but remove the measurement noise's bias
exactly. For Gaussian functions the noise's effect is known in closed form
(Hyvarinen's Gaussian moments for noisy ICA): with z = s + e, e Gaussian of
variance v, s of unit variance,

    E[exp(-s^2 / 2)]     = (1 - v)^(-1/2) E[exp(-z^2 / (2 (1 - v)))]
    E[s exp(-s^2 / 2)]   = (1 - v)^(-3/2) E[z exp(-z^2 / (2 (1 - v)))]

so the noise-free negentropy approximation
``(E[exp(-s^2/2)] - 1/sqrt(2))^2 + 0.3 E[s exp(-s^2/2)]^2`` (the even term of
scikit-learn's "exp" contrast and the polish's skewness term) is estimated
without bias from the noisy residuals. Each residual is standardised to unit
signal variance (the correction's signal covariance), and v is its noise
variance in those units (``raw - signal``, the correction's estimate).

Variant ``gauss``: ``polish_signal`` maximises that contrast (numerical
gradients, BFGS from the ordering's directions; start kept unless the contrast
increases). Tuning seeds only::

    python gauss_polish_trial.py {package,independent} 0 50 OUT.jsonl
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cumulant_polish_trial import VARIANTS, ascent, main  # noqa: E402

GAUSS = 1.0 / np.sqrt(2.0)


def gauss_contrast(G, X_list, signal, raw):
    d = G.shape[0]
    value = 0.0
    for X, S, R in zip(X_list, signal, raw):
        n = X.shape[0]
        L = np.linalg.cholesky(G @ S @ G.T / n)
        M = G.T @ np.linalg.inv(L).T  # X @ M: residuals with unit signal variance
        v = np.clip(np.einsum("ij,ik,kj->j", M, R - S, M) / n, 0.0, 0.5)
        Z = X @ M
        E = np.exp(-Z**2 / (2.0 * (1.0 - v)))
        even = np.mean(E, axis=0) / np.sqrt(1.0 - v) - GAUSS
        odd = np.mean(Z * E, axis=0) / (1.0 - v) ** 1.5
        value += float(np.sum(even**2 + 0.3 * odd**2))
    return value / d


if __name__ == "__main__":
    main(VARIANTS[:2] + [("gauss", ascent(gauss_contrast), {"measurement_noise": "auto"})])
