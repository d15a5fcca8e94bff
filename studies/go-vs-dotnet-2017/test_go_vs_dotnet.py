"""go-vs-dotnet-2017: the Go build the report names, the article's loads in the params and the
rows, and the notebook's tables beside the published numbers (read from reference/) on a
recorded real quick run. The notebook runs end to end in tests/test_studies.py."""

import json
import math
import re

import pandas as pd
import pytest

from conftest import committed_run, get_ok, published, start_server
from hostbench.analysis import tables
from hostbench.analysis.differences import bytes_per_response
from hostbench.analysis.reference import load_reference, load_setup
from hostbench.harness.environment import go_build
from hostbench.harness.launch import web
from hostbench.params import StudyParams
from hostbench.paths import BIN, ROOT
from hostbench.results import valid_rows
from hostbench.studies import study_of

GO_STUDY = study_of(__file__)
go_vs_dotnet = GO_STUDY.analysis
GO_RESULTS = GO_STUDY.fixtures_dir / "quick-results.csv"
FIXTURES = GO_STUDY.fixtures_dir


# --- the Go build the study reports ----------------------------------------------------------


@pytest.mark.live
def test_the_environment_names_the_go_and_iris_versions_goserver_was_built_with():
    found = go_build(BIN / "goserver")
    assert re.fullmatch(r"go1\.\d+(\.\d+)?", found["go"])
    required = re.search(
        r"github\.com/kataras/iris/v12 (v\S+)", (ROOT / "testapp/go/go.mod").read_text()
    )
    assert found["iris"] == required.group(1)


@pytest.mark.live
def test_the_templates_page_is_the_size_the_articles_output_implies(tmp_path):
    # Its MB/s over its req/s, headers included, for each server it ran: within 10% of ours.
    url = f"http://127.0.0.1:{web.free_port()}"
    with start_server("iris-mvc", BIN / "goserver", ["--framework", "iris-mvc", "--urls", url],
                      tmp_path, url):  # fmt: skip
        page = get_ok(url + "/", "text/html")
    status_line = len("HTTP/1.1 200 OK\r\n")
    headers = sum(len(k) + len(v) + 4 for k, v in page.headers.items()) + 2
    ours = status_line + headers + len(page.body)
    article = go_vs_dotnet.article_bytes_per_response()
    assert len(article) == 2
    for server, size in article.items():
        assert abs(ours / size - 1) <= 0.10, (server, size, ours)


# --- the study rows carry the articles' settings ---------------------------------------------


def _bombardier_setting(item: str) -> tuple[int, int]:
    """(connections, requests) of the article's bombardier command, read from setup.csv."""
    words = load_setup("go-vs-dotnet-2017").set_index("item").loc[item, "value"]
    numbers = [int(w) for w in re.findall(r"\d+", words)]
    return (numbers[0], numbers[1])


def test_the_go_study_runs_the_articles_loads():
    paper = StudyParams.from_file(GO_STUDY.params_path("paper"))
    conv = StudyParams.from_file(GO_STUDY.params_path(go_vs_dotnet.CONVERGENCE_PROFILE))
    for scenario, item in (("values", "bombardier_values"), ("templates", "bombardier_templates")):
        connections, requests = _bombardier_setting(item)
        assert paper.concurrency == [connections] and paper.tools == ["bombardier"]
        assert conv.requests_for(scenario) == requests  # the article's counts, run alone
        assert paper.requests_for(scenario) is None  # shared windows are timed
    assert conv.requests_for("values-minimal") == conv.requests_for("values")
    # The paper profile's servers share each window; the minimal API is one of them on values.
    assert paper.interleave_slice_s is not None and go_vs_dotnet.MINIMAL in paper.modes
    assert [m for m, _, sc, _, _ in paper.cells() if m == go_vs_dotnet.MINIMAL] == [
        go_vs_dotnet.MINIMAL
    ]
    # The rows of the real quick run: bombardier at the article's connections, each server
    # getting its time in alternating runs within every window of its scenario.
    rows = pd.read_csv(GO_RESULTS)
    quick = StudyParams.from_file(GO_STUDY.params_path("quick"))
    assert set(rows["tool"]) == {"bombardier"} and set(rows["concurrency"]) == {connections}
    for r in rows[rows["valid"]].itertuples(index=False):
        assert r.duration_s == pytest.approx(quick.duration_s, rel=0.05)
    shared = rows.groupby(["block", "scenario", "attempt"])["started_at"].nunique()
    assert (shared == 1).all()  # one window per scenario and block, every server in it
    pairs = set(zip(rows["mode"], rows["scenario"], strict=True))
    assert {sc for m, sc in pairs if m == go_vs_dotnet.MINIMAL} == {"values"}
    assert len(pairs) == len(quick.cells()) and set(rows["block"]) == {1, 2}
    assert (rows["rss_server_mean_mb"] <= rows["rss_server_peak_mb"]).all()


# --- the notebooks' tables on a recorded real run --------------------------------------------


def test_the_go_tables_put_the_published_values_beside_ours():
    results = tables.load_results(GO_RESULTS, valid_only=False)
    values = go_vs_dotnet.article_table(results, "values").set_index("server (ours)")
    iris, dotnet = values.loc["Iris (MVC controllers)"], values.loc["Kestrel, AddMvcCore"]
    article = "go-vs-dotnet-2017"
    assert iris["req/s, article"] == published(article, "go-iris", "values", "rps", "bombardier")
    assert dotnet["req/s, article"] == published(article, "kestrel", "values", "rps", "bombardier")
    assert iris["memory [MB], article"] == published(
        article, "go-iris", "values", "memory_mb", "总结"
    )
    # The summary paragraph (memory included) is the earlier AddMvc run: beside our full MVC.
    full = values.loc["Kestrel"]
    assert full["memory [MB], article"] == published(
        article, "kestrel", "values", "memory_mb", "总结"
    )
    assert full["req/s, article"] == published(article, "kestrel", "values", "rps", "总结")
    assert "AddMvc()" in full["the article's server"]
    assert math.isnan(dotnet["memory [MB], article"])  # none stated for the AddMvcCore run
    assert 0 < dotnet["memory without mapped files [MB], ours"] < dotnet["RSS mean [MB], ours"]
    assert dotnet["latency mean [ms], article"] == published(
        article, "kestrel", "values", "latency_mean_ms", "bombardier"
    )
    # Ours: the mean over the recorded runs; our additions have no article's values.
    runs = results[(results["mode"] == "iris-mvc") & (results["scenario"] == "values")]
    assert iris["req/s, ours"] == pytest.approx(runs["rps"].mean())
    assert iris["RSS peak [MB], ours"] == runs["rss_server_peak_mb"].max()
    assert math.isnan(values.loc["Go net/http", "req/s, article"])
    assert "Kestrel, minimal API" in values.index
    templates = go_vs_dotnet.article_table(results, "templates").set_index("server (ours)")
    assert templates.loc["Kestrel", "req/s, article"] == published(
        article, "kestrel", "mvc-templates", "rps", "bombardier"
    )  # the article's templates app used full MVC
    assert math.isnan(templates.loc["Kestrel, AddMvcCore", "req/s, article"])
    shown = go_vs_dotnet.formatted(values)
    assert shown.loc["Go net/http", "req/s, article"] == "-"


def test_the_summary_rows_are_labelled_by_the_run_they_describe():
    # The update replaced the bombardier output only: the summary's figures are not the
    # AddMvcCore output's, so they are the earlier AddMvc run's, and labelled so.
    ref = load_reference("go-vs-dotnet-2017")
    dotnet = ref[(ref["mode"] == "kestrel") & (ref["scenario"] == "values")]
    summary = dotnet[dotnet["where"].str.startswith("总结")]
    output = dotnet[dotnet["where"].str.startswith("bombardier output")]
    assert len(summary) and summary["setup"].str.contains("AddMvc()", regex=False).all()
    assert not summary["setup"].str.contains("AddMvcCore", regex=False).any()
    assert output["setup"].str.contains("AddMvcCore()", regex=False).all()
    rps = {where: frame.loc[frame["metric"] == "rps", "value"].iloc[0]
           for where, frame in (("summary", summary), ("output", output))}  # fmt: skip
    assert rps["summary"] != rps["output"]
    # The update's throughput before the switch belongs to the same run as the summary.
    before = dotnet[dotnet["where"].str.startswith("2017-08-20 update")]
    assert set(before["setup"]) == set(summary["setup"])
    runs = go_vs_dotnet.values_runs().set_index("the article's run")
    assert len(runs) == 2 and runs.filter(like="AddMvcCore", axis=0)["memory [MB]"].iloc[0] == "-"


def test_the_go_ratios_are_paired_within_blocks_and_words_follow_them():
    results = tables.load_results(GO_RESULTS, valid_only=False)
    rps = go_vs_dotnet.ratios(results, "rps")
    row = rps[(rps["scenario"] == "values") & (rps["mode"] == "kestrel-mvccore")].iloc[0]
    # The article's ratio comes from reference/; ours is the geometric mean of block ratios.
    article = "go-vs-dotnet-2017"
    want = published(article, "kestrel", "values", "rps", "bombardier") / published(
        article, "go-iris", "values", "rps", "bombardier"
    )
    assert row["article_ratio"] == pytest.approx(want)
    mine = results[results["scenario"] == "values"].set_index(["mode", "block"])["rps"]
    per_block = [mine["kestrel-mvccore", b] / mine["iris-mvc", b] for b in (1, 2)]
    assert row["ratio"] == pytest.approx(math.exp(sum(map(math.log, per_block)) / 2))
    assert row["n"] == 2
    word = "slower" if row["ci_high"] < 1 else "faster" if row["ci_low"] > 1 else "indistinguish"
    assert row["in words"].startswith(word)
    minimal = rps[rps["mode"] == go_vs_dotnet.MINIMAL]
    assert list(minimal["scenario"]) == ["values"]  # values-minimal pairs with Iris's values
    memory = go_vs_dotnet.ratios(results, go_vs_dotnet.MEMORY)
    mem = memory[(memory["scenario"] == "values") & (memory["mode"] == "kestrel")].iloc[0]
    assert mem["in words"].split(":")[0] in (
        "more memory",
        "less memory",
        "indistinguishable at this precision",
    )
    line = go_vs_dotnet.headline(rps, memory)
    assert f"(article {100 * want:.0f}%)" in line and "\n" not in line
    assert f"(article {mem['article_ratio']:.2f}x)" in line and "without mapped files" in line
    # Given the rows, it says the size of our page as each compared server sent it.
    kept = valid_rows(results)
    dotnet, iris = (bytes_per_response(kept[kept["mode"] == m])["templates"]
                    for m in ("kestrel", "iris-mvc"))  # fmt: skip
    sizes = go_vs_dotnet.templates_size(results)
    assert sizes in go_vs_dotnet.headline(rps, memory, results)
    if f"{dotnet:,.0f}" == f"{iris:,.0f}":
        assert sizes == f", {dotnet:,.0f} bytes per response with headers from both servers"
    else:
        assert f"{dotnet:,.0f} bytes per response with headers from Kestrel and {iris:,.0f}" in (
            sizes
        )
    env = json.loads((FIXTURES / "quick-environment.json").read_text())
    text = go_vs_dotnet.then_and_now(rps, memory, go_vs_dotnet.dotnet_shares(results), env)
    assert "without the pages mapped from files" in text
    assert (
        env["goserver"]["iris"] in text
        and load_setup(article).set_index("item").loc["iris", "value"] in text
    )


def test_the_go_memory_compares_with_the_article_by_our_reading_of_excluding_the_framework():
    """The article's .NET memory excludes the dotnet framework: its ratio stands beside ours
    without the pages mapped from files (the runtime's and framework's binaries), never
    beside the whole RSS, and the words say it is our reading of the article's."""
    results = tables.load_results(GO_RESULTS, valid_only=False)
    article = "go-vs-dotnet-2017"
    want = published(article, "kestrel", "values", "memory_mb", "总结") / published(
        article, "go-iris", "values", "memory_mb", "总结"
    )
    same = go_vs_dotnet.ratios(results, go_vs_dotnet.MEMORY).set_index(["scenario", "mode"])
    whole = go_vs_dotnet.ratios(results, go_vs_dotnet.MEMORY_WHOLE).set_index(["scenario", "mode"])
    assert same.loc[("values", "kestrel"), "article_ratio"] == pytest.approx(want)
    assert math.isnan(same.loc[("values", "kestrel-mvccore"), "article_ratio"])
    assert whole["article_ratio"].isna().all()  # not beside the whole RSS
    # Ours: per block, .NET's memory without mapped files over Iris MVC's, geometric mean.
    runs = results[results["scenario"] == "values"].set_index(["mode", "block"])
    per_block = [
        runs.loc[("kestrel", b), go_vs_dotnet.MEMORY]
        / runs.loc[("iris-mvc", b), go_vs_dotnet.MEMORY]
        for b in (1, 2)
    ]
    assert same.loc[("values", "kestrel"), "ratio"] == pytest.approx(
        math.exp(sum(map(math.log, per_block)) / 2)
    )
    # The file-mapped part is what separates the two measures, and .NET maps more of it.
    table = go_vs_dotnet.summary(results).set_index(["scenario", "mode"])
    mapped = table["rss_mean_mb"] - table["rss_anon_mean_mb"]
    assert (mapped > 0).all() and mapped[("values", "kestrel")] > mapped[("values", "iris-mvc")]
    text = go_vs_dotnet.ratio_sentences(
        go_vs_dotnet.ratios(results, "rps"), same.reset_index(), whole.reset_index()
    )
    assert f"was {want:.2f}x in the article, excluding the dotnet framework" in text
    # Ours without mapped files is our reading of the article's words, said so: the article
    # names no tool and no measure (its report says so too, in section 4).
    assert f"without the pages mapped from files ({go_vs_dotnet.MEMORY_READING})" in text
    assert "the article's measure" not in text and "the other measure" in text
    assert "mapped from files" in go_vs_dotnet.memory_split(go_vs_dotnet.summary(results))


def test_a_run_from_before_the_split_says_so_instead_of_comparing_the_whole_rss():
    # A results.csv written before the harness recorded memory without mapped files.
    old = tables.load_results(GO_RESULTS, valid_only=False).drop(columns=go_vs_dotnet.MEMORY)
    same = go_vs_dotnet.ratios(old, go_vs_dotnet.MEMORY)
    whole = go_vs_dotnet.ratios(old, go_vs_dotnet.MEMORY_WHOLE)
    assert same.empty and whole["article_ratio"].isna().all()
    text = go_vs_dotnet.ratio_sentences(go_vs_dotnet.ratios(old, "rps"), same, whole)
    assert "not recorded in this run" in text and "the other measure" in text
    assert "did not record" in go_vs_dotnet.memory_split(go_vs_dotnet.summary(old))
    assert (
        go_vs_dotnet.memory_figure(old).axes
        and go_vs_dotnet.ratio_figure(go_vs_dotnet.ratios(old, "rps"), same).axes
    )


def test_the_headline_says_the_same_bytes_only_where_both_servers_sent_them():
    # The committed run: Kestrel sent 7,618 bytes per response, Iris MVC 7,615.
    results = tables.load_results(committed_run(GO_STUDY), valid_only=False)
    text = go_vs_dotnet.workload_differences(results)
    assert "the same bytes" not in text and "from both servers" not in text
    assert "7,618 bytes per response with headers from Kestrel and 7,615 from Iris" in text
    # Where both sent the same, one number says so.
    same = results.assign(bytes_read=results["requests"] * 7616)
    assert ", 7,616 bytes per response with headers from both servers." in (
        go_vs_dotnet.workload_differences(same)
    )
