"""Student's t quantile, for intervals on few blocks (and the regularized incomplete beta
function it rests on, for binomial bounds too): numpy and pandas only, no scipy, so
the quantile is computed here by inverting the t CDF through the regularized incomplete beta
function."""

import math
from functools import lru_cache

from ..errors import BadInput


def t_quantile(p: float, df: float) -> float:
    """The p quantile of Student's t distribution with df degrees of freedom.

    Found by inverting the t CDF, written with the regularized incomplete beta function:
    for t > 0, P(T > t) = I_x(df/2, 1/2) / 2 with x = df / (df + t^2). Accurate to ~1e-10,
    e.g. t_quantile(0.975, 9) = 2.2622 (two-sided 95% with 10 values).
    """
    if not 0.0 < p < 1.0:
        raise BadInput(f"t quantile: p must be in (0, 1), got {p!r}")
    if not df > 0:
        raise BadInput(f"t quantile: degrees of freedom must be > 0, got {df!r}")
    if p == 0.5:
        return 0.0
    t = _upper_t(min(p, 1.0 - p), float(df))
    return t if p > 0.5 else -t


@lru_cache(maxsize=256)
def _upper_t(tail: float, df: float) -> float:
    # The t > 0 with P(T > t) = tail. I_x rises with x and t falls with x, so bisect on x.
    target = 2.0 * tail
    low, high = 0.0, 1.0
    for _ in range(200):  # halves the bracket each time; ends when it can't shrink any more
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if incomplete_beta(mid, df / 2.0, 0.5) < target:
            low = mid
        else:
            high = mid
    x = 0.5 * (low + high)
    return math.sqrt(df * (1.0 - x) / x)


def incomplete_beta(x: float, a: float, b: float) -> float:
    """Regularized incomplete beta I_x(a, b) (Numerical Recipes, section 6.4)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    # The continued fraction converges fast only left of the mode; use the symmetry beyond it.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    # Continued fraction for I_x(a, b), evaluated by the modified Lentz method.
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 100_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < eps:
            return result
    raise ArithmeticError(f"incomplete beta did not converge for x={x}, a={a}, b={b}")
