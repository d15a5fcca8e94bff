"""What a page prints: tables (prose.table), intervals in words and numbers, tool versions,
response checks, the load sweep's note. Synthetic values with answers known by hand."""

import math

import pandas as pd
import pytest

from hostbench.analysis import prose, tables, wording
from hostbench.errors import BadInput
from hostbench.pagecheck import page_defects


def _page(styler) -> str:
    return f"<html><body><h2>t</h2>{styler.to_html()}</body></html>"


def test_a_table_names_its_columns_in_words_and_labels_modes_and_scenarios():
    df = pd.DataFrame({"mode": ["kestrel", "nginx-keepalive", "my-server"],
                       "scenario": ["html", "text", "no-such-scenario"],
                       "rps_mean": [5847.2, 2448.0, 12.5], "left_out_invalid": [0, 1, 0],
                       "knee": [True, False, True]})  # fmt: skip
    page = prose.table(df).to_html()
    assert page_defects(_page(prose.table(df))) == []
    for name in ("hosting mode", "requests/s (mean)", "runs left out", "knee"):
        assert f">{name}</th>" in page
    assert ">Kestrel + nginx (TCP, keep-alive)</td>" in page and ">HTML</td>" in page
    assert ">my-server</td>" in page and ">no-such-scenario</td>" in page  # not in the catalog
    assert ">5,847</td>" in page and ">12.50</td>" in page and ">yes</td>" in page
    assert "rps_mean" not in page and "left_out_invalid" not in page
    assert prose.column_name("rps_mean") == "requests/s (mean)"
    # report.css keeps numbers whole and lets long text break anywhere, by these classes.
    assert 'class="data row0 col2 num" >5,847</td>' in page
    long = prose.table(pd.DataFrame({"body": ["x" * 200], "n": [1]})).to_html()
    assert 'class="data row0 col0 long"' in long and 'class="data row0 col1 num"' in long
    assert prose.column_name("a study's own words") == "a study's own words"


def test_a_missing_value_is_a_dash_with_what_it_means_under_the_table():
    df = pd.DataFrame({"mode": ["kestrel", "nginx"], "cpu_proxy_cores_mean": [math.nan, 0.32],
                       "rps_ci_low": [math.nan, 900.0], "note": [None, "x"]})  # fmt: skip
    page = prose.table(df).to_html()
    assert "nan" not in page.lower() and "None" not in page and "n/a" not in page
    assert page.count(">–</td>") == 3
    assert "<caption>– no proxy in this mode (proxy [cores]); – one block: no interval" in page
    custom = prose.table(df, dash_means={"note": "not stated"}).to_html()
    assert "– not stated (note)" in custom
    full = prose.table(df.fillna({"cpu_proxy_cores_mean": 0.1, "rps_ci_low": 1.0, "note": "y"}))
    assert "<caption>" not in full.to_html()  # no dash, nothing to explain


def test_a_table_has_no_index_column_and_keeps_a_labelled_index_as_a_column():
    runs = pd.DataFrame({"mode": ["kestrel", "kestrel"], "cpu_total_pct": [94.5, 95.1]})
    grouped = runs.groupby("mode").mean()
    page = prose.table(grouped).to_html()
    assert ">hosting mode</th>" in page and ">Kestrel</td>" in page
    rows = pd.DataFrame({"x": [1, 2]}, index=[7, 8])  # row numbers of a filtered frame
    assert ">7</td>" not in prose.table(rows).to_html()
    twice = prose.table(pd.concat([rows, rows])).to_html()  # repeated row numbers: rendered
    assert twice.count(">1</td>") == 2 and ">7</td>" not in twice
    labels = pd.DataFrame({"x": [1, 2]}, index=["errors", "non_2xx"])  # labels: a column
    assert ">errors</td>" in prose.table(labels).to_html()
    assert page_defects(_page(prose.table(rows))) == page_defects(_page(prose.table(labels))) == []


def test_a_cell_with_markup_shows_it_as_text_and_formats_apply_by_raw_name():
    df = pd.DataFrame({"body": ['<h1>HTML scenario</h1><Id>1</Id>'], "ratio_pct": [155.4],
                       "ci_low_pct": [140.6]})  # fmt: skip
    styler = prose.table(df, wording.PCT_FORMATS)
    page = styler.to_html()
    assert "&lt;h1&gt;HTML scenario&lt;/h1&gt;&lt;Id&gt;1&lt;/Id&gt;" in page
    assert ">155%</td>" in page and ">140%</td>" in page  # the low end floored, as printed
    assert page_defects(_page(styler)) == []


def test_a_ratio_prints_as_a_multiple_by_the_same_rule():
    assert wording.times_text(1.554) == "1.55x" and wording.times_text(math.nan) == "n/a"
    assert wording.ci_text(1.101, 1.399, unit="x") == "95% CI 1.10-1.40x"  # outwards
    assert wording.ci_text(2.62, 2.62, unit="x") == "95% CI 2.62-2.62x"  # no float creep
    assert wording.ratio_text(1.2, 1.1, 1.3, unit="x") == "1.20x (95% CI 1.10-1.30x)"
    assert wording.ratio_text(1.2, math.nan, math.nan, unit="x") == (
        "1.20x (one block only, no interval)"
    )
    words = wording.describe(3.1, 2.9, 3.3, higher="more memory", lower="less memory",
                             unit="x", baseline="Iris MVC's")  # fmt: skip
    assert words == "more memory: 3.10x Iris MVC's (95% CI 2.90-3.30x)"
    assert wording.describe(0.98, 0.89, 1.08) == (
        "indistinguishable at this precision: 98% of the baseline (95% CI 89-108%)"
    )
    table = wording.with_ratio_text(
        pd.DataFrame({"ratio": [1.2], "ci_low": [1.1], "ci_high": [1.3]}), unit="x"
    )
    assert table["ours (95% CI)"].tolist() == ["1.20x (95% CI 1.10-1.30x)"]
    with pytest.raises(BadInput, match="a ratio prints in % or x; got 'times'"):
        wording.ratio_text(1.2, 1.1, 1.3, unit="times")


def test_a_tool_version_is_shown_without_its_banner_or_keywords(tmp_path):
    raw = "This is ApacheBench, Version 2.3 <$Revision: 1903618 $>"
    assert tables.version_text(raw) == "ApacheBench, Version 2.3"
    assert tables.version_text("This is ApacheBench, Version 2.3 <$Revision$>") == (
        "ApacheBench, Version 2.3"
    )
    assert tables.version_text("nginx/1.22.1") == "nginx/1.22.1"
    (tmp_path / "environment.json").write_text(f'{{"tools": {{"ab": "{raw}"}}, "os": "x"}}')
    assert tables.load_environment(tmp_path) == {
        "tools": {"ab": "ApacheBench, Version 2.3"},
        "os": "x",
    }


def test_response_checks_sum_per_group_and_take_the_largest_difference_either_sign():
    df = pd.DataFrame({"mode": ["kestrel", "kestrel", "nginx"], "rps": [1.0, 1.0, 1.0],
                       "errors": [0, 2, 0], "non_2xx": [1, 0, 0],
                       "count_diff_pct": [0.1, -0.4, 0.0]})  # fmt: skip
    one = tables.response_checks(df)
    assert one.to_dict("records") == [{"runs checked": "all runs", "runs": 3, "errors": 2,
                                        "non_2xx": 1, "count_diff_pct_max": 0.4}]  # fmt: skip
    per = tables.response_checks(df, ["mode"]).set_index("mode")
    assert per.loc["kestrel", "errors"] == 2 and per.loc["nginx", "runs"] == 1
    assert page_defects(_page(prose.table(one))) == []


def test_the_sweep_note_says_where_the_highest_mean_is_when_it_is_past_the_knee():
    findings = pd.DataFrame([
        dict(mode="kestrel", scenario="text", tool="k6", levels="1, 2, 4, 8", blocks=3, knee=2,
             highest=8, cpu_busy_peak_pct=97.2, cpu_reached_100=False, best=8, best_rps=10200.0),
        dict(mode="nginx", scenario="text", tool="k6", levels="1, 2, 4", blocks=3, knee=2,
             highest=4, cpu_busy_peak_pct=99.7, cpu_reached_100=True, best=2, best_rps=3000.0),
    ])  # fmt: skip
    kestrel, nginx = prose.calibration_note(findings).splitlines()
    assert "stops growing measurably at 2" in kestrel
    assert "the highest mean is at 8 (10,200 requests/s), inside that interval" in kestrel
    assert "highest mean" not in nginx


def test_a_long_text_is_folded_under_its_summary():
    html = prose.Listing("const x = 1 < 2;", "The k6 script")._repr_html_()
    assert html == (
        "<details><summary>The k6 script</summary><pre>const x = 1 &lt; 2;</pre></details>"
    )


def test_a_range_of_one_value_prints_as_one_number():
    assert prose.span([2596.0, 2596.2], ",.0f") == "2,596"
    assert prose.span([2596.0, 2610.0], ",.0f") == "2,596-2,610"
    runs = pd.DataFrame({"load_avg_1m": [0.5, 0.9], "cpu_steal_pct": [0.0, 1.5],
                         "cpu_freq_mhz": [2596.0, 2596.0],
                         "foreign_cores": [0.0, 0.001]})  # fmt: skip
    text = prose.machine_state(runs)
    assert "clock read 2,596 MHz" in text and "0.00 " not in text and "no CPU worth" in text
    assert page_defects(f"<html><body><p>{text}</p></body></html>") == []
