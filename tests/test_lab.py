"""The hosting lab's params and what-ifs (hostbench/lab.py) and its analysis
(hostbench/analysis/hops.py) on a recorded quick run (tests/fixtures/lab/, see its README).
Starts no process; the lab's end-to-end run is tests/test_lab_live.py."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.backends.backend_agg import FigureCanvasAgg

from hostbench import lab
from hostbench.__main__ import main
from hostbench.analysis import hops
from hostbench.analysis.student_t import t_quantile
from hostbench.analysis.wording import difference_text
from hostbench.catalog import MODES, mode_label
from hostbench.errors import BadInput

FIXTURE = Path(__file__).parent / "fixtures" / "lab"
RESULTS = pd.read_csv(FIXTURE / "results.csv")
PROXIED = [m for m in RESULTS["mode"].unique() if m != "kestrel"]


# --- params and what-ifs --------------------------------------------------------------------


def test_both_profiles_are_valid_and_quick_states_only_what_differs():
    assert lab.profiles() == ["class", "quick"]
    for profile in lab.profiles():
        params = lab.lab_params(profile)
        assert params.modes[0] == "kestrel" == params.baseline_mode
        assert len(params.scenarios) == len(params.tools) == len(params.concurrency) == 1
    quick = yaml.safe_load((lab.PARAMS_DIR / "quick.yaml").read_text())
    assert quick.pop("extends") == "class"
    whole = yaml.safe_load((lab.PARAMS_DIR / "class.yaml").read_text())
    assert all(k not in whole or whole[k] != v for k, v in quick.items()), "quick repeats class"
    assert lab.lab_params("quick").repetitions == 2  # the fewest that give an interval


def test_every_what_if_reaches_the_params():
    params = lab.lab_params(
        "class", modes=["nginx-keepalive"], scenario="html", nginx_keepalive_pool=1,
        nginx_workers=1, log_level="Debug", blocks=8,
    )  # fmt: skip
    assert params.modes == ["kestrel", "nginx-keepalive"]  # Kestrel alone is always measured
    assert params.scenarios == ["html"] and params.repetitions == 8
    own = params.options.program_settings
    assert (own["nginx_keepalive_pool"], own["nginx_workers"]) == (1, 1)
    assert params.options.app_args[-2:] == ["--log-level", "Debug"]
    note = lab.settings_note(params)
    assert "**HTML**" in note and "**1** worker," in note and "**1** idle" in note
    assert "**Debug**" in note


def test_each_set_of_settings_measures_into_its_own_folder():
    plain = lab.settings_run_id("class", lab.lab_params("class"))
    assert plain == lab.settings_run_id("class", lab.lab_params("class"))  # resumes
    other = {
        lab.settings_run_id("class", lab.lab_params("class", **what_if))
        for what_if in ({"nginx_workers": 1}, {"log_level": "Debug"}, {"blocks": 3},
                        {"scenario": "json"}, {"nginx_keepalive_pool": 4})
    }  # fmt: skip
    assert len(other) == 5 and plain not in other
    run = lab.open_lab("quick", runs_dir="/tmp/somewhere", nginx_workers=1)
    assert run.run_id.startswith("lab-quick-") and run.out_dir.parent == Path("/tmp/somewhere")


def test_a_mode_name_the_student_mistyped_is_refused():
    with pytest.raises(BadInput, match="unknown mode 'ngnix'"):
        lab.lab_params("class", modes=["ngnix"])


@pytest.mark.parametrize(
    "what_if, message",
    [
        ({"log_level": "Loud"}, "log_level 'Loud': allowed: Trace, Debug, Information"),
        ({"nginx_workers": 0}, "'nginx_workers' must be an integer >= 1, got 0"),
        ({"blocks": 0}, "'repetitions' must be an integer >= 1, got 0"),
        ({"scenario": "pdf"}, "unknown scenario 'pdf'"),
        ({"modes": ["caddy"], "nginx_keepalive_pool": 2}, "no such mode is in ['kestrel', 'c"),
    ],
)
def test_a_bad_what_if_is_refused_in_one_line(what_if, message):
    with pytest.raises(BadInput) as err:
        lab.lab_params("quick", **what_if)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_an_unknown_profile_is_refused_by_the_command_line(capsys):
    assert main(["lab", "--profile", "exam"]) == 2
    err = capsys.readouterr().err
    assert err == "error: the lab has no profile 'exam'; allowed: class, quick\n"


def test_the_plan_counts_the_runs_and_bounds_their_time():
    params = lab.lab_params("class", modes=["nginx"], blocks=3)
    note = lab.plan_note(params)
    assert note.startswith("6 runs: 2 modes x 3 blocks")
    per_run = params.warmup_s + params.duration_s + lab.OVERHEAD_S
    assert lab.estimate_s(params) == 6 * per_run
    assert f"about {6 * per_run / 60:.0f} min" in note


# --- the analysis, on the recorded run ------------------------------------------------------


def test_cpu_per_request_is_each_groups_cores_over_the_requests_per_second():
    runs = hops.per_request(RESULTS)
    for r in runs.itertuples(index=False):
        assert r.app_us == pytest.approx(1e6 * r.cpu_server_cores / r.rps)
        proxy = 0.0 if MODES[r.mode].launch != "proxy" else 1e6 * r.cpu_proxy_cores / r.rps
        assert r.proxy_us == pytest.approx(proxy) and r.proxy_us >= 0
        assert r.hosting_us == pytest.approx(r.app_us + r.proxy_us)


def _by_hand(mode: str, column: str) -> tuple[float, float, float]:
    """The paired difference to Kestrel alone, block by block, from the recorded rows."""
    runs = hops.per_request(RESULTS).set_index(["mode", "block"])[column]
    blocks = sorted(set(RESULTS.loc[RESULTS["mode"] == mode, "block"]))
    d = np.array([runs[(mode, b)] - runs[("kestrel", b)] for b in blocks])
    half = t_quantile(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return d.mean(), d.mean() - half, d.mean() + half


def test_each_hop_is_paired_with_kestrel_alone_in_its_block():
    costs = hops.hop_costs(RESULTS)
    assert costs["mode"].iloc[0] == "kestrel" and costs["added"].isna().iloc[0]
    assert sorted(costs["mode"].iloc[1:]) == sorted(PROXIED)
    for mode in PROXIED:
        row = costs.set_index("mode").loc[mode]
        assert (row["added"], row["added_low"], row["added_high"]) == pytest.approx(
            _by_hand(mode, "hosting_us")
        )
        assert (row["app_added"], row["app_added_low"], row["app_added_high"]) == pytest.approx(
            _by_hand(mode, "app_us")
        )
        assert row["paired"] == RESULTS["block"].nunique()


def test_the_table_gives_every_comparison_with_its_interval():
    costs = hops.hop_costs(RESULTS)
    table = hops.hop_table(costs)
    assert list(table["mode"]) == [mode_label(m) for m in costs["mode"]]
    first = table.iloc[0]
    assert first["added per request, app + proxy (95% CI)"] == "the baseline"
    assert first["proxy µs/request"] == "-"
    for (_, row), cost in zip(table.iloc[1:].iterrows(), costs.iloc[1:].itertuples(), strict=True):
        added = row["added per request, app + proxy (95% CI)"]
        assert added == difference_text(cost.added, cost.added_low, cost.added_high)
        assert "95% CI" in added and "95% CI" in row["of it in the app (95% CI)"]
        assert "95% CI" in row["throughput, % of Kestrel alone (95% CI)"]
    assert not table.isna().any().any()  # a dash, never a NaN


def _with_pool_effect(saving_us: float, noise_us: float, seed: int = 1) -> pd.DataFrame:
    """The recorded rows, with nginx-keepalive made from nginx's own runs, block by block:
    the app's CPU per request lower by `saving_us` give or take `noise_us`."""
    rng = np.random.default_rng(seed)
    rows = RESULTS.copy()
    for block in sorted(rows["block"].unique()):
        plain = rows[(rows["mode"] == "nginx") & (rows["block"] == block)].iloc[0]
        target = rows.index[(rows["mode"] == "nginx-keepalive") & (rows["block"] == block)][0]
        app_us = 1e6 * plain["cpu_server_cores"] / plain["rps"]
        app_us -= saving_us + rng.uniform(-noise_us, noise_us)
        rows.loc[target, ["rps", "cpu_proxy_cores"]] = plain[["rps", "cpu_proxy_cores"]]
        rows.loc[target, "cpu_server_cores"] = app_us * plain["rps"] / 1e6
    return rows


def test_the_pool_sentence_says_only_what_its_interval_supports():
    saves = hops.pool_sentence(_with_pool_effect(saving_us=100.0, noise_us=1.0))
    assert "**the pool saves CPU**" in saves and "In the app:" in saves
    assert "no longer accepts" in saves  # the why, only when the app's saving is shown
    undecided = hops.pool_sentence(_with_pool_effect(saving_us=0.0, noise_us=50.0))
    assert "**indistinguishable at this precision**" in undecided
    assert "saves" not in undecided and "no longer accepts" not in undecided
    costs = hops.pool_sentence(_with_pool_effect(saving_us=-100.0, noise_us=1.0))
    assert "**the pool costs CPU here**" in costs


def test_the_socket_sentence_compares_transport_and_pool_by_their_intervals():
    text = hops.socket_sentence(RESULTS)
    assert text.startswith("Over a Unix socket")
    verdicts = ("the socket saves CPU", "the socket costs CPU here", hops.UNDECIDED)
    assert sum(f"**{v}**" in text for v in verdicts) == 1
    assert "A pooled TCP hop against a Unix-socket hop" in text


def test_the_in_process_bound_is_the_cheapest_hop_measured():
    costs = hops.hop_costs(RESULTS)
    cheapest = hops.proxies(costs).iloc[0]
    assert cheapest["added"] == costs.loc[costs["mode"].isin(PROXIED), "added"].min()
    text = hops.inprocess_sentence(costs)
    assert f"The cheapest, {mode_label(cheapest['mode'])}" in text
    assert difference_text(cheapest["added"], cheapest["added_low"], cheapest["added_high"]) in text
    loose = not cheapest["added_low"] > 0
    assert ("the bound is loose" in text) == loose
    # The same run with the cheapest hop's interval made to lie above 0: no caveat.
    tight = costs.copy()
    tight.loc[tight["mode"] == cheapest["mode"], ["added_low", "added_high"]] = [1.0, 2.0]
    assert "loose" not in hops.inprocess_sentence(tight)


def test_a_mode_left_out_of_the_run_says_how_to_add_it():
    without = RESULTS[~RESULTS["mode"].isin(["nginx-uds", "caddy", "yarp"])]
    assert "add it to `modes`" in hops.socket_sentence(without)
    costs = hops.hop_costs(without)
    assert "`caddy`" in hops.hop_sentence(costs, "caddy")
    assert "add it to `modes`" in hops.hop_sentence(costs, "yarp")


def test_the_sentences_name_what_each_hop_adds():
    costs = hops.hop_costs(RESULTS)
    assert hops.baseline_sentence(costs).startswith(f"**{hops.ALONE}**: ")
    for mode in PROXIED:
        text = hops.hop_sentence(costs, mode)
        row = costs.set_index("mode").loc[mode]
        assert difference_text(row["added"], row["added_low"], row["added_high"]) in text
        assert f"The proxy itself spent {row['proxy_us']:,.0f} µs per request" in text
    busiest = costs[costs["mode"].isin([m for m in PROXIED if MODES[m].proxy == "nginx"])]
    note = hops.nginx_cores_note(costs, 2)
    assert f"{busiest['cpu_proxy_cores'].max():.2f} cores" in note and "2 worker processes" in note


def test_figures_draw_every_hop_with_its_interval_and_every_path_with_its_cpu():
    costs = hops.hop_costs(RESULTS)
    fig = hops.hop_figure(costs)
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    assert len(ax.patches) == len(PROXIED)  # one bar per hop
    labels = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}
    order = sorted(labels, key=labels.get, reverse=True)  # top to bottom
    assert order == [mode_label(m) for m in costs["mode"].iloc[1:]]
    assert len(ax.containers) >= len(PROXIED)  # bars and their error bars
    for mode in costs["mode"]:
        notes = hops.path_notes(costs, mode)
        assert len(notes) == len(MODES[mode].nodes)
        assert all("µs CPU" in n for n in notes)
    path = hops.path(costs, "nginx")
    texts = [t.get_text() for t in path.axes[0].texts]
    assert any("vs Kestrel alone" in t for t in texts)


def test_results_of_two_load_setups_are_refused():
    two = pd.concat([RESULTS, RESULTS.assign(scenario="json")])
    with pytest.raises(BadInput, match="one load; these results hold 2"):
        hops.hop_costs(two)


def test_what_ifs_from_the_command_line():
    assert lab.parse_what_if("nginx_workers=1") == ("nginx_workers", 1)
    assert lab.parse_what_if("log_level=Debug") == ("log_level", "Debug")
    assert lab.parse_what_if("modes=[kestrel, nginx]") == ("modes", ["kestrel", "nginx"])
    for text, message in [
        ("workers=1", "what-if 'workers=1': give NAME=VALUE, NAME one of modes, scenario"),
        ("nginx_workers", "give NAME=VALUE"),
        ("modes=[kestrel", "is not a value (e.g. 1, Debug, [a, b])"),
    ]:
        with pytest.raises(BadInput) as err:
            lab.parse_what_if(text)
        assert message in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(BadInput, match="unknown what-if\\(s\\) pool; allowed: modes"):
        lab.reproduce_lab("quick", what_ifs={"pool": 1})
    # Every what-if is a parameter of the notebook, which papermill sets by name.
    import json

    cells = json.loads(lab.NOTEBOOK.read_text())["cells"]
    parameters = next(c for c in cells if "parameters" in c["metadata"].get("tags", []))
    names = {line.split("=")[0].strip() for line in "".join(parameters["source"]).splitlines()}
    assert set(lab.WHAT_IFS) <= names and "settings" in names


def test_any_params_key_set_on_the_command_line_reaches_the_labs_params_and_its_page():
    p = lab.lab_params("quick", nginx_workers=1, settings=["duration_s=4", "seed=7"])
    assert (p.duration_s, p.seed, p.options.program_settings["nginx_workers"]) == (4, 7, 1)
    assert p.set_on_command_line == {"duration_s": "4", "seed": "7"}
    assert "Set on the command line: `duration_s=4, seed=7`" in lab.settings_note(p)
    assert "command line" not in lab.settings_note(lab.lab_params("quick"))
    # Its own folder, as a what-if gets.
    assert lab.settings_run_id("quick", p) != lab.settings_run_id("quick", lab.lab_params("quick"))
    for given, message in [(["duration_s=0"], "duration_s"), (["speed=1"], "--set 'speed=1'")]:
        with pytest.raises(BadInput) as err:
            lab.lab_params("quick", settings=given)
        assert message in str(err.value) and "\n" not in str(err.value)


def test_the_teachers_page_states_the_profiles_as_they_are():
    import re

    from hostbench.paths import ROOT

    page = (ROOT / "docs" / "teaching.md").read_text()
    rows = re.findall(
        r"^\| `(\w+)`[^|]*\| (\d+) \| (\d+) s \| (\d+) s \| (\d+) \| about (\d+) min \|$",
        page,
        re.M,
    )
    assert sorted(r[0] for r in rows) == lab.profiles()
    for profile, blocks, load_s, warmup_s, runs, minutes in rows:
        params = lab.lab_params(profile)
        assert (int(blocks), float(load_s), float(warmup_s)) == (
            params.repetitions,
            params.duration_s,
            params.warmup_s,
        )
        assert int(runs) == len(params.modes) * params.repetitions
        per_run = params.warmup_s + params.duration_s + lab.OVERHEAD_S
        assert int(minutes) == round(int(runs) * per_run / 60)


def test_a_run_without_a_valid_kestrel_alone_says_what_to_do():
    rows = RESULTS.assign(invalid_reason=RESULTS["invalid_reason"].astype(object))
    rows.loc[rows["mode"] == "kestrel", ["valid", "invalid_reason"]] = [False, "machine busy"]
    with pytest.raises(BadInput) as err:
        hops.hop_costs(rows)
    assert "no valid run of Kestrel to compare with" in str(err.value)
    assert "hostbench doctor" in str(err.value) and "\n" not in str(err.value)


def test_a_mode_never_in_a_block_with_kestrel_alone_has_no_pair_and_no_bar():
    rows = RESULTS.copy()
    first = rows["block"].min()
    # caddy's runs only in the first block, Kestrel alone's only in the others.
    rows = rows[~((rows["mode"] == "caddy") & (rows["block"] != first))]
    rows = rows[~((rows["mode"] == "kestrel") & (rows["block"] == first))]
    costs = hops.hop_costs(rows)
    caddy = costs.set_index("mode").loc["caddy"]
    assert caddy["paired"] == 0 and math.isnan(caddy["added"])
    assert hops.hop_table(costs).set_index("mode").loc[mode_label("caddy")].iloc[3] == "n/a"
    fig = hops.hop_figure(costs)
    assert mode_label("caddy") not in [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert not any("vs Kestrel alone" in n for n in hops.path_notes(costs, "caddy"))
