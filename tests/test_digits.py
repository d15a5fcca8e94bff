"""The CSVs of computed numbers are written at one declared precision, and compared as numbers to
it: a re-render on another processor, whose last binary digits differ, writes the same table."""

import numpy as np
import pandas as pd
import pytest

from hostbench.analysis.digits import (
    RELATIVE_TOLERANCE,
    SIGNIFICANT_DIGITS,
    csv_differences,
    write_csv,
)
from hostbench.paths import RUNS

RATIOS = RUNS / "example-selfhost-2012-paper" / "ratios.csv"


def _perturbed(ratios: pd.DataFrame, factor: float) -> pd.DataFrame:
    floats = ratios.select_dtypes("float").columns
    return ratios.assign(**{c: ratios[c] * factor for c in floats})


@pytest.fixture
def ratios() -> pd.DataFrame:
    if not RATIOS.is_file():
        pytest.skip(f"{RATIOS.parent.name} is not committed")
    return pd.read_csv(RATIOS)


def test_floats_that_differ_in_their_last_digits_compare_equal(tmp_path, ratios):
    write_csv(_perturbed(ratios, 1 + 1e-15), tmp_path / "ratios.csv")  # another processor's
    assert csv_differences(RATIOS, tmp_path / "ratios.csv") == []


def test_floats_that_differ_at_the_sixth_digit_do_not(tmp_path, ratios):
    write_csv(_perturbed(ratios, 1 + 1e-5), tmp_path / "ratios.csv")
    found = csv_differences(RATIOS, tmp_path / "ratios.csv")
    floats = ratios.select_dtypes("float").columns
    assert [line.split(":")[0] for line in found] == [repr(c) for c in floats if ratios[c].any()]


def test_text_and_whole_numbers_compare_exactly(tmp_path, ratios):
    ratios.assign(n=ratios["n"] + 1).to_csv(tmp_path / "n.csv", index=False)
    ratios.assign(mode="kestrel-stale").to_csv(tmp_path / "mode.csv", index=False)
    assert [line.split(":")[0] for line in csv_differences(RATIOS, tmp_path / "n.csv")] == ["'n'"]
    assert csv_differences(RATIOS, tmp_path / "mode.csv")[0].startswith("'mode': ")
    ratios.drop(columns="n").to_csv(tmp_path / "fewer.csv", index=False)
    assert csv_differences(RATIOS, tmp_path / "fewer.csv")[0].startswith("columns ")


def test_the_last_digits_round_away_as_they_are_written(tmp_path, ratios):
    mine, theirs = tmp_path / "mine.csv", tmp_path / "theirs.csv"
    write_csv(ratios, mine)
    write_csv(_perturbed(ratios, 1 + 1e-15), theirs)
    assert mine.read_text() == theirs.read_text()
    written = pd.read_csv(mine, dtype=str)["ratio"]
    digits = written.str.replace(r"^0\.0*|\.|e.*$", "", regex=True).str.len()
    assert digits.max() <= SIGNIFICANT_DIGITS
    assert np.allclose(pd.read_csv(mine)["ratio"], ratios["ratio"], rtol=RELATIVE_TOLERANCE)
