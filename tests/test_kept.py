"""What the analysis keeps of a frame (hostbench.analysis.kept): computed again only when the
frame's content changed, and never shared with a caller that edits what it got."""

import numpy as np
import pandas as pd
import pytest

from hostbench.analysis import claims
from hostbench.analysis.intervals import paired_ratios
from hostbench.analysis.kept import frame_key
from hostbench.paths import ROOT


def study(fast: float, blocks: int = 6, seed: int = 3) -> pd.DataFrame:
    """Runs of a baseline at about 1000 rps and `fast` times it, noise of 5% on the log scale."""
    rng = np.random.default_rng(seed)
    rows = [dict(mode=mode, scenario="s0", tool="k6", concurrency=8, block=b,
                 rps=1000.0 * ratio * float(np.exp(rng.normal(0, 0.05))))
            for b in range(1, blocks + 1)
            for mode, ratio in (("base", 1.0), ("fast", fast))]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_same_comparison_asked_again_is_computed_from_what_the_frame_holds_now():
    # paired_ratios keeps its answers by the frame's content (kept.frame_key): a frame edited in
    # place gets its new intervals, and an answer the caller edits is not what the next gets.
    df = study(1.5)
    first = paired_ratios(df, "base")
    first.loc[:, "ratio"] = 0.0
    again = paired_ratios(df, "base")
    assert again["ratio"].iloc[0] == pytest.approx(1.5, rel=0.1)
    df.loc[df["mode"] == "fast", "rps"] *= 2
    doubled = paired_ratios(df, "base")
    assert doubled["ratio"].iloc[0] == pytest.approx(2 * again["ratio"].iloc[0])
    # Another confidence is another interval of the same frame.
    wider = paired_ratios(df, "base", confidence=0.99)
    assert wider["ci_low"].iloc[0] < doubled["ci_low"].iloc[0]


def test_a_frames_key_is_its_values_in_order_and_their_types_not_its_index():
    df = pd.DataFrame({"mode": ["a", "b"], "rps": [1.0, 2.0]})
    assert frame_key(df) == frame_key(df.set_axis([10, 11]))
    assert frame_key(df) != frame_key(df.iloc[::-1].reset_index(drop=True))
    assert frame_key(df) != frame_key(df.rename(columns={"rps": "latency"}))
    ordered = df.assign(mode=pd.Categorical(df["mode"], categories=["a", "b"]))
    reversed_ = df.assign(mode=pd.Categorical(df["mode"], categories=["b", "a"]))
    assert frame_key(ordered) != frame_key(reversed_) != frame_key(df)


def test_a_claims_tables_copies_share_its_points_rather_than_copy_them():
    # pandas deep-copies a frame's attrs on each operation; a claims table's points and
    # conditions are shared by its slices instead (read only), and still there in each.
    table = claims.of_run("jcsi2018", ROOT / "data" / "runs" / "example-jcsi2018-claims")
    points = table.attrs[claims.POINTS]
    assert points and table.iloc[:1].attrs[claims.POINTS] is points
    assert (
        table[table[claims.VERDICT] != ""].attrs[claims.CONDITIONS]
        is table.attrs[claims.CONDITIONS]
    )
