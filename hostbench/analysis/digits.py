"""The one precision at which the package writes a CSV of computed numbers (ratios.csv,
compare.csv, claims.csv, differences.csv, convergence.csv), and how two such files are compared.

The same analysis of the same rows gives the same numbers on every processor but for their last
binary digits: numpy sums in an order its vector instructions choose, and libm's exp and log
round as their processor's code does (on one AMD EPYC a ratio ended ...85712114928, on another
...85712114929). Written at SIGNIFICANT_DIGITS those digits round away (all but never: a value
on a rounding boundary still shows the difference, so files are compared as numbers, by
csv_differences), and every figure a page prints, with far fewer digits, stays the same."""

from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

SIGNIFICANT_DIGITS = 12
FLOAT_FORMAT = f"%.{SIGNIFICANT_DIGITS}g"
# Two files written at SIGNIFICANT_DIGITS agree to within one unit of their last digit, which is
# at most this much of the value (a value whose digits begin with 1); and a number that is zero
# but for rounding (a difference of equal ratios) may be written as a tiny one.
RELATIVE_TOLERANCE = 10.0 ** (1 - SIGNIFICANT_DIGITS)
ABSOLUTE_TOLERANCE = 10.0**-SIGNIFICANT_DIGITS


def write_csv(frame: pd.DataFrame, path: str | Path) -> Path:
    """`frame` as a CSV at `path` (no index), its floats at SIGNIFICANT_DIGITS; replaced at
    once (an interrupted write leaves the old file)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    frame.to_csv(tmp, index=False, float_format=FLOAT_FORMAT)
    tmp.replace(path)
    return path


def csv_differences(a: str | Path, b: str | Path) -> list[str]:
    """How two CSVs differ, a line a column: numbers compared as numbers, equal to within
    the precision they are written at (RELATIVE_TOLERANCE, ABSOLUTE_TOLERANCE), other cells as
    text; an empty cell equals only an empty cell. [] when they hold the same table."""
    left, right = pd.read_csv(a), pd.read_csv(b)
    if list(left.columns) != list(right.columns):
        return [f"columns {list(left.columns)} against {list(right.columns)}"]
    if len(left) != len(right):
        return [f"{len(left)} rows against {len(right)}"]
    found = []
    for column in left.columns:
        same = _same_cells(left[column], right[column])
        if not same.all():
            row = int(np.flatnonzero(~same)[0])
            found.append(f"{column!r}: {int((~same).sum())} of {len(same)} rows differ, the first "
                         f"(line {row + 2}) {left[column].iloc[row]!r} against "
                         f"{right[column].iloc[row]!r}")  # fmt: skip
    return found


def _same_cells(x: pd.Series, y: pd.Series) -> np.ndarray:
    numbers = all(is_numeric_dtype(s) and not is_bool_dtype(s) for s in (x, y))
    if numbers:
        return np.isclose(x.to_numpy(float), y.to_numpy(float), rtol=RELATIVE_TOLERANCE,
                          atol=ABSOLUTE_TOLERANCE, equal_nan=True)  # fmt: skip
    return (x.isna() & y.isna()).to_numpy() | (x.astype(str) == y.astype(str)).to_numpy()
