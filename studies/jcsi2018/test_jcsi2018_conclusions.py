"""Section 6 computed from the intervals, and the paper's figures with the paper beside them
(or a note that it gives no number), on recorded runs and on synthetic ones."""

import dataclasses
import json

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from conftest import committed_run, runs  # noqa: E402
from hostbench.analysis import claims, intervals, verdicts, wording  # noqa: E402
from hostbench.analysis import tables as analysis  # noqa: E402
from hostbench.analysis.reference import load_claims  # noqa: E402
from hostbench.catalog import mode_label  # noqa: E402
from hostbench.studies import study_of  # noqa: E402

STUDY = study_of(__file__)
jcsi2018 = STUDY.analysis
DEPENDS = "depends on how its hop is configured"


def _hop_runs(keepalive: float, uds: float, spread: float = 0.02) -> pd.DataFrame:
    """Four blocks of nginx (1000 rps), nginx-keepalive and nginx-uds at the given multiples
    of it (-+spread on the log scale from block to block), html and text."""
    rows = []
    for block, sign in enumerate([-1, 1, -1, 1]):
        for scenario in ("html", "text"):
            for mode, factor in (("nginx", 1.0), ("nginx-keepalive", keepalive),
                                 ("nginx-uds", uds)):  # fmt: skip
                rps = 1000.0 * factor * (np.exp(sign * spread) if mode != "nginx" else 1.0)
                rows.append((mode, scenario, "k6", 8, block, rps))
    return pd.DataFrame(rows, columns=["mode", "scenario", "tool", "concurrency", "block", "rps"])


def test_a_configurations_effect_is_stated_only_where_its_interval_supports_it():
    text = jcsi2018.conclusions(_hop_runs(keepalive=2.0, uds=1.0))
    pool, socket = text.splitlines()[:2]
    ratios = intervals.paired_ratios(_hop_runs(keepalive=2.0, uds=1.0), "nginx")
    html = ratios[(ratios["mode"] == "nginx-keepalive") & (ratios["scenario"] == "html")].iloc[0]
    assert "faster on HTML " + wording.ratio_text(html.ratio, html.ci_low, html.ci_high) in pool
    assert "no effect shown on HTML, text (the interval includes 100%)" in socket
    assert DEPENDS in text and "here an upstream keep-alive pool (on HTML, text) changed it" in text
    assert "for a Unix socket in place of loopback TCP, no interval shows an effect" in text
    slower = jcsi2018.conclusions(_hop_runs(keepalive=1.0, uds=0.5))
    assert "slower on HTML" in slower.splitlines()[1] and "Unix socket" in slower.splitlines()[-1]


def test_no_effect_no_claim_that_configuring_the_hop_matters():
    text = jcsi2018.conclusions(_hop_runs(keepalive=1.0, uds=1.0))
    assert DEPENDS not in text
    assert text.endswith("so this run does not say that configuring the hop matters.")


def test_conclusions_on_the_recorded_runs():
    # 3 blocks of nginx, kestrel and nginx-uds on a busy machine: the socket's intervals
    # include 100%, so no sentence says the hop's configuration matters.
    three = jcsi2018.conclusions(analysis.load_results(STUDY.fixtures_dir / "3blocks",
                                                       valid_only=False))  # fmt: skip
    assert "keep-alive" not in three and DEPENDS not in three
    assert "no effect shown on HTML, text" in three
    # A quick run: one block, no interval, nothing can be said.
    quick = jcsi2018.conclusions(analysis.load_results(STUDY.fixtures_dir / "quick-results.csv",
                                                       valid_only=False))  # fmt: skip
    assert quick.count("nothing can be said on HTML, text, JSON, XML") == 2
    assert DEPENDS not in quick
    alone = jcsi2018.conclusions(runs({"kestrel": 2.0, "caddy": 1.0}))
    assert alone.startswith("This run has no configuration of the hop beside")


def test_section_6_is_computed_not_typed():
    nb = json.loads(STUDY.notebook_path.read_text())
    markdown = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "depends on how the hop is configured" not in markdown
    code = " ".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "jcsi2018.conclusions(all_runs)" in code


def test_the_method_says_the_blocks_and_windows_in_words():
    params = analysis.load_params(STUDY.fixtures_dir / "3blocks")
    assert jcsi2018.method(params).startswith("This run: ") and "3 blocks. Each block" in (
        jcsi2018.method(params)
    )
    one = dataclasses.replace(params, repetitions=1)
    assert "1 block. Each block launches every mode once" in jcsi2018.method(one)
    assert "one window of each mode" in jcsi2018.method(one)
    focused = dataclasses.replace(params, windows=2, focus=["kestrel"], baseline="nginx",
                                  target_halfwidth_pct=5.0)  # fmt: skip
    text = jcsi2018.method(focused)
    assert "2 windows of `kestrel`, `nginx` and one of each other mode" in text
    assert "for a 95% half-width of 5%" in text and "`design.json`" in text


def test_the_papers_values_in_words():
    table = jcsi2018.paper_values_table()
    assert list(table.columns) == ["the paper's model", "scenario", "% of its baseline",
                                   "the paper's words"]  # fmt: skip
    first = table.iloc[0]
    assert (first["% of its baseline"], first["the paper's words"]) == (
        "100%",
        "the baseline, by definition",
    )
    rows = table.set_index(["the paper's model", "scenario"])
    assert rows.loc[(mode_label("kestrel"), "HTML"), "% of its baseline"] == "170%"
    assert rows.loc[(mode_label("kestrel"), "text"), "the paper's words"].startswith('"nawet 200%"')
    assert rows.loc[(mode_label("httpsys"), "HTML"), "the paper's words"] == "+50%"
    assert rows.loc[(mode_label("iis-inprocess"), "HTML"), "% of its baseline"] == "136-153%"


def test_the_papers_models_in_one_figure_with_what_runs_here_and_what_the_paper_gives():
    modes = ["kestrel", "nginx", "nginx-keepalive", "nginx-uds", "caddy"]
    fig = jcsi2018.figures.paper_models_chart(runs({m: 1.0 for m in modes}), modes,
                                              "nginx-keepalive")  # fmt: skip
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert titles == ["Fig. 4: " + mode_label("iis-outofprocess"), "Fig. 5: Kestrel",
                      "Fig. 6: HTTP.sys", "Fig. 7: " + mode_label("iis-inprocess")]  # fmt: skip
    out_of_process, kestrel, httpsys, in_process = fig.axes
    legend = [t.get_text() for t in out_of_process.get_legend().get_texts()]
    assert legend == [f"{mode_label('nginx-keepalive')}: our baseline, stands for it",
                      f"{mode_label('nginx')}: analog",
                      f"{mode_label('caddy')}: analog"]  # fmt: skip
    assert [t.get_text() for t in httpsys.texts] == [
        "Windows only: not measured here\n(docs/windows.md)"
    ]
    assert "cheaper-hop analog" in in_process.get_legend().get_texts()[0].get_text()
    # The paper gives its requests/s only in images: the figure says so under it.
    note = fig.get_supxlabel()
    assert "only in its figures' images" in note and "a few thousand" in note
    assert "a few thousand" in jcsi2018.figures.all_models_chart(runs()).get_supxlabel()
    assert len({ax.get_ylim() for ax in fig.axes}) == 1  # one scale


def test_the_in_process_gain_over_the_standard_model_has_its_row_and_says_why_not_here():
    """Section 5: Kestrel inside IIS's worker process gives 'znaczny wzrost wydajności' (a
    significant increase) over the standard model. Its own reason is the hop between two
    processes removed, which no Linux analog removes: a row of its own, not testable here,
    with that reason, shown on every run's box."""
    rows = load_claims(STUDY.id)
    row = rows[rows["claim"].str.startswith("IIS in-process gives a significant gain")]
    assert len(row) == 1
    row = row.iloc[0]
    assert row["kind"] == "not testable" and "znaczny wzrost wydajności" in row["quote"]
    assert "'znaczny wzrost wydajności'" in row["reading"] and "above 1.00x" in row["reading"]
    for reason in ("inside IIS's worker process", "no hop between processes",
                   "nginx over a Unix socket keeps both processes"):  # fmt: skip
        assert reason in row["note"]
    box = claims.of_run(STUDY.id, committed_run(STUDY)).set_index(claims.CLAIM)
    assert box.loc[row["claim"], claims.VERDICT] == verdicts.NOT_TESTABLE
    assert box.loc[row["claim"], claims.OURS] == row["note"]
