"""TLS as an axis of the hosting modes: each TLS mode the twin of a plain one, its programs'
configs, a certificate made per launch and removed with it, the load tools speaking HTTPS to
it, the TLS columns of its rows, and the one-line refusals."""

import csv
import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from conftest import SHORT_RUNS
from hostbench import results
from hostbench.analysis import claims, tables
from hostbench.catalog import (
    MODES,
    SCENARIOS,
    TLS_AT_PROXY,
    TLS_IN_SERVER,
    TLS_TWINS,
    get_mode,
    get_scenario,
    has_tls_twin,
    linux_modes,
    plain_twin,
    tls_twin,
)
from hostbench.errors import BadInput
from hostbench.harness.launch import certificate, netns, web
from hostbench.harness.launch.modes import LaunchOptions, launch
from hostbench.harness.launch.places import Local
from hostbench.harness.measure.checks import validate
from hostbench.harness.measure.k6_interleaved import k6_interleaved_script
from hostbench.harness.measure.loadgen import get_generator, k6_script
from hostbench.harness.measure.run import RunSpec, execute, tls_columns
from hostbench.harness.measure.slices import SliceSchedule
from hostbench.harness.study import run_study
from hostbench.load import Load
from hostbench.params import StudyParams
from hostbench.paths import RUNS, STUDIES_DIR
from hostbench.programs import Certificate, Setup, get_program, programs_of
from hostbench.programs.caddy import caddy_config
from hostbench.programs.nginx import nginx_config
from hostbench.programs.yarp import yarp_config
from hostbench.runtime_variants import check_mode, get_variant

TLS_MODES = [m.id for m in MODES.values() if m.tls]
CERT = Certificate("/tmp/run/tls-cert.pem", "/tmp/run/tls-key.pem")


def test_each_tls_mode_is_a_plain_mode_with_every_hop_alike_but_the_clients():
    assert set(TLS_MODES) == set(TLS_TWINS.values()) and len(TLS_TWINS) == len(TLS_MODES)
    for plain_id, tls_id in TLS_TWINS.items():
        tls, plain = MODES[tls_id], MODES[plain_id]
        assert plain.tls is None and tls.added and tls_id in linux_modes()
        same = ("launch", "proxy", "keepalive", "unix_socket", "server", "server_args", "serves")
        assert [getattr(tls, f) for f in same] == [getattr(plain, f) for f in same], tls_id
        assert tls.tls == (TLS_AT_PROXY if plain.proxy else TLS_IN_SERVER)
        assert tls.scheme == "https" and plain.scheme == "http"
        assert tls_twin(plain_id) == tls_id and tls_twin(tls_id) == tls_id
        assert plain_twin(tls_id) == plain_id and plain_twin(plain_id) == plain_id
        assert has_tls_twin(plain_id) and has_tls_twin(tls_id)
    # The pool stays where the plain mode has one.
    assert MODES["nginx-keepalive-tls"].keepalive == MODES["nginx-keepalive"].keepalive


@pytest.mark.parametrize("mode", ["iris", "nginx-uds", "external"])
def test_tls_asked_of_a_mode_without_a_twin_is_one_line(mode):
    assert not has_tls_twin(mode) and plain_twin(mode) == mode
    with pytest.raises(BadInput) as err:
        tls_twin(mode)
    message = str(err.value)
    assert f"mode {mode!r} cannot terminate TLS" in message and "kestrel, nginx" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "base, tls, said",
    [
        ("iris", TLS_IN_SERVER, "goserver cannot terminate TLS; programs that can: TestApp"),
        ("kestrel", TLS_AT_PROXY, "asks for TLS at the proxy but has none"),
        ("nginx", "edge", "tls 'edge'; allowed: server, proxy or none"),
    ],
)
def test_tls_asked_of_a_program_that_cannot_terminate_it_is_one_line(base, tls, said):
    mode = dataclasses.replace(get_mode(base), id=f"{base}-asked", tls=tls)
    with pytest.raises(BadInput, match=said) as err:
        programs_of(mode)
    assert "\n" not in str(err.value)


def test_each_proxy_writes_its_tls_config_from_the_certificate(tmp_path):
    front = dict(listen_port=8443, upstream="127.0.0.1:5001", listen_host="127.0.0.1")
    nginx = nginx_config(**front, keepalive=None, workers=1, run_dir=tmp_path, tls=CERT)
    assert "listen 127.0.0.1:8443 ssl;" in nginx and "http2" not in nginx
    assert f'ssl_certificate     "{CERT.cert}";' in nginx
    assert f'ssl_certificate_key "{CERT.key}";' in nginx and "TLSv1.3" in nginx
    assert "ssl" not in nginx_config(**front, keepalive=None, workers=1, run_dir=tmp_path)
    caddy = caddy_config(**front, run_dir=tmp_path, tls=CERT)
    assert "https://:8443 {" in caddy and f'tls "{CERT.cert}" "{CERT.key}"' in caddy
    assert "protocols h1" in caddy  # HTTP/1.1, as over plain HTTP
    assert "http://:8443 {" in caddy_config(**front, run_dir=tmp_path)
    text = yarp_config(**front, tls=CERT)  # its notes (// lines), then the JSON
    yarp = json.loads("\n".join(line for line in text.splitlines() if not line.startswith("//")))
    endpoint = yarp["Kestrel"]["Endpoints"]["https"]
    assert endpoint["Url"] == "https://127.0.0.1:8443" and endpoint["Protocols"] == "Http1"
    assert endpoint["Certificate"] == {"Path": CERT.cert, "KeyPath": CERT.key}
    # The app behind it stays on plain HTTP.
    assert yarp["ReverseProxy"]["Clusters"]["testapp"]["Destinations"]["app"]["Address"] == (
        "http://127.0.0.1:5001/"
    )


def test_the_test_app_serves_https_with_kestrels_own_certificate_options():
    app = get_program("TestApp")
    mode = get_mode("kestrel-tls")
    setup = Setup(mode, LaunchOptions(), "127.0.0.1:8443", tls=CERT)
    assert setup.url == "https://127.0.0.1:8443"
    assert app.argv("TestApp", setup, Path("."))[1:3] == ["--urls", "https://127.0.0.1:8443"]
    env = app.env(setup, Path("."))
    assert env["Kestrel__Certificates__Default__Path"] == CERT.cert
    assert env["Kestrel__Certificates__Default__KeyPath"] == CERT.key
    plain = Setup(get_mode("kestrel"), LaunchOptions(), "127.0.0.1:8080")
    assert plain.url == "http://127.0.0.1:8080" and not any("Kestrel" in k for k in app.env(
        plain, Path(".")))  # fmt: skip


@pytest.mark.live  # openssl
def test_a_certificate_is_made_for_the_front_and_removed_however_the_launch_ends(tmp_path):
    with certificate.per_launch(Local(), "198.18.0.2") as cert:
        made = Path(cert.cert)
        assert made.is_file() and Path(cert.key).is_file()
        assert not made.is_relative_to(Path.cwd() / "data")  # never in the run folders
        assert (Path(cert.key).stat().st_mode & 0o077) == 0  # the key: its owner's only
        names = subprocess.run(["openssl", "x509", "-in", cert.cert, "-noout", "-ext",
                                "subjectAltName", "-text"], capture_output=True, text=True,
                               check=True).stdout  # fmt: skip
        assert "IP Address:127.0.0.1" in names and "IP Address:198.18.0.2" in names
        assert "DNS:localhost" in names and "prime256v1" in names
    assert not made.exists() and not made.parent.exists()
    with pytest.raises(RuntimeError), certificate.per_launch(Local(), "127.0.0.1") as cert:
        made = Path(cert.cert)
        raise RuntimeError("the launch failed")
    assert not made.parent.exists()


def test_each_load_tool_speaks_https_to_a_tls_modes_url(tmp_path):
    https = Load("bombardier", 4, 1, path="/text", base_url="https://127.0.0.1:8443")
    http = https.aimed_at("http://127.0.0.1:8080")
    assert https.tls and not http.tls
    bombardier = get_generator("bombardier")
    assert "-k" in bombardier.argv(https, "f", "bombardier")
    assert "-k" not in bombardier.argv(http, "f", "bombardier")
    assert "insecureSkipTLSVerify: true" in k6_script(https.url, 4, 1)
    assert "insecureSkipTLSVerify" not in k6_script(http.url, 4, 1)
    # wrk and ab take the https URL as it is: they never verify a certificate.
    for tool in ("wrk", "ab"):
        load = Load(tool, 4, 1, path="/text", base_url="https://127.0.0.1:8443")
        assert get_generator(tool).argv(load, "f", tool)[-1] == "https://127.0.0.1:8443/text"


def test_an_interleaved_window_with_a_tls_mode_skips_verification():
    schedule = SliceSchedule(targets=2, slice_s=0.25, seed=1, order=(1, 0, 0, 1))
    urls = ["http://127.0.0.1:1/text", "https://127.0.0.1:2/text"]
    assert "insecureSkipTLSVerify: true" in k6_interleaved_script(urls, 2, schedule)
    assert "insecureSkipTLSVerify" not in k6_interleaved_script(urls[:1] * 2, 2, schedule)


def test_the_tls_columns_are_declared_once_and_empty_for_plain_http():
    assert set(results.TLS_COLUMNS) <= set(results.NAMES)
    assert tls_columns("http://127.0.0.1:1") == {"tls_version": "", "tls_cipher": ""}
    old = results.upgraded({"run_key": "k"})  # a row recorded before TLS modes existed
    assert (old["tls_version"], old["tls_cipher"]) == ("", "")


@pytest.mark.live
@pytest.mark.parametrize("mode", TLS_MODES)
def test_a_tls_mode_serves_https_refuses_plain_http_and_leaves_no_certificate(mode, tmp_path):
    with launch(mode, tmp_path, LaunchOptions()) as target:
        assert target.url.startswith("https://")
        for name in MODES[mode].serves or SCENARIOS:
            validate(get_scenario(name), target.get(get_scenario(name).path))
        probed = tls_columns(target.url)
        assert probed["tls_version"] == "TLSv1.3" and probed["tls_cipher"].startswith("TLS_")
        try:  # plain HTTP to the TLS port: refused (closed), or answered 400, never served
            status = web.get(target.url.replace("https://", "http://", 1) + "/text").status
        except OSError:
            status = None
        assert status in (None, 400), status
        made = Path(target.certificate.cert)
        assert made.is_file() and not made.is_relative_to(tmp_path)
        assert not list(tmp_path.rglob("*.pem"))  # nothing of it kept with the run
    assert not made.parent.exists()


@pytest.mark.live
@pytest.mark.parametrize("tool, keepalive", [("k6", True), ("bombardier", True),
                                             ("wrk", True), ("ab", False)])  # fmt: skip
def test_a_run_on_a_tls_mode_records_its_tls_and_connection_reuse(tool, keepalive, tmp_path):
    p = StudyParams.from_dict({
        "modes": ["nginx-keepalive-tls"], "scenarios": ["text"], "tools": [tool],
        "concurrency": [2], "duration_s": 2, "warmup_s": 1, "repetitions": 1,
        "keepalive": keepalive, "sample_interval_s": 0.25, **SHORT_RUNS,
    })  # fmt: skip
    spec = RunSpec.of_cell(p, "nginx-keepalive-tls", "text", tool, 2, 1, 1)
    row = execute(spec, tmp_path / spec.key, p)
    assert row["rps"] > 0 and row["errors"] == 0 and row["non_2xx"] == 0, row["invalid_reason"]
    assert row["tls_version"] == "TLSv1.3" and row["tls_cipher"].startswith("TLS_")
    assert row["keepalive"] is keepalive  # ab without -k: a handshake per request


@pytest.mark.live
@pytest.mark.skipif(bool(netns.not_allowed()), reason=netns.not_allowed() or "allowed")
def test_tls_modes_run_across_two_namespaces_with_the_certificate_where_they_run(tmp_path):
    params = StudyParams.from_dict(
        {"modes": ["kestrel-tls", "caddy-tls"], "scenarios": ["text"], "tools": ["bombardier"],
         "concurrency": [2], "duration_s": 1, "warmup_s": 0, "repetitions": 1,
         "topology": "netns", **SHORT_RUNS}
    )  # fmt: skip
    found = run_study(params, "two-hosts", tmp_path, progress=False)
    rows = list(csv.DictReader(found.open()))
    assert {r["mode"] for r in rows} == {"kestrel-tls", "caddy-tls"}
    for r in rows:
        assert r["valid"] == "True" and r["tls_version"] == "TLSv1.3", r["invalid_reason"]
        command = (tmp_path / "two-hosts" / r["run_key"] / "load" / "command.txt").read_text()
        assert f"-k https://{netns.SERVER_ADDRESS}:" in command
    assert not list(tmp_path.rglob("*.pem"))


@pytest.mark.parametrize("study", ["jcsi2018", "linux-proxies-2021"])
@pytest.mark.parametrize("profile", ["paper", "scope"])
def test_the_tls_sub_study_runs_every_mode_of_its_study_on_its_tls_twin(study, profile):
    main = StudyParams.from_file(STUDIES_DIR / study / "params" / f"{profile}.yaml")
    tls = main.sub_study("tls")
    assert tls.modes == [TLS_TWINS[m] for m in main.modes if m in TLS_TWINS]
    assert plain_twin(tls.baseline_mode) == main.baseline_mode
    assert tls.focus == [TLS_TWINS[m] for m in main.focus]
    # Only the modes change: the load, its tool and its connections are the study's.
    assert (tls.tools, tls.concurrency) == (main.tools, main.concurrency)
    assert tls.stop_when_decided == main.stop_when_decided  # the scope's: until decided


def _as_tls_sub_study(run: Path, into: Path) -> Path:
    """A copy of committed run `run` in `into`, with a `tls` sub-study beside it whose rows are
    the run's own, every mode renamed to its TLS twin: the same numbers on TLS."""
    copy = into / run.name
    copy.mkdir()
    for name in ("results.csv", "params.json", "design.json"):
        if (run / name).is_file():
            (copy / name).write_bytes((run / name).read_bytes())
    params = json.loads((run / "params.json").read_text())
    twins = {"modes": [TLS_TWINS[m] for m in params["modes"]],
             "baseline": TLS_TWINS[params["baseline"]]}  # fmt: skip
    params["sub_studies"] = {"tls": twins}
    (copy / "params.json").write_text(json.dumps(params))
    sub = into / f"{run.name}-tls"
    sub.mkdir()
    (sub / "params.json").write_text(json.dumps({**params, **twins, "sub_studies": {}}))
    with (run / "results.csv").open() as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["mode"] = TLS_TWINS[row["mode"]]
    with (sub / "results.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return copy


@pytest.mark.parametrize("study", ["jcsi2018", "linux-proxies-2021"])
def test_the_claims_are_judged_again_with_every_mode_on_its_tls_twin(study, tmp_path):
    run = _as_tls_sub_study(RUNS / f"example-{study}-claims", tmp_path)
    table = claims.of_run(study, run)
    judged = table[~table[claims.VERDICT].isin(["not testable", "not re-run"])]
    condition = "the tls sub-study (every mode on TLS)"
    # The same numbers under the twins' names: every verdict the run judged holds there too.
    tls_judged = judged[judged[claims.SENSITIVITY].str.contains(condition, regex=False)]
    assert len(tls_judged) and all(
        s.startswith("holds under all") for s in tls_judged[claims.SENSITIVITY]
    )
    # A run of the twins alone is judged as the plain modes it puts on TLS.
    results = tables.load_results(tmp_path / f"{run.name}-tls", valid_only=False)
    sub_params = tables.load_params(tmp_path / f"{run.name}-tls")
    again = claims.for_results(study, results, sub_params)
    assert (
        again[claims.VERDICT].tolist()
        == claims.for_results(
            study, tables.load_results(run, valid_only=False), tables.load_params(run)
        )[claims.VERDICT].tolist()
    )


def test_a_runtime_variant_whose_host_sets_up_no_https_is_refused_tls_in_the_app():
    with pytest.raises(BadInput, match="slim host does not set up") as err:
        check_mode(get_variant("aot"), get_mode("kestrel-tls"))
    assert "\n" not in str(err.value)
    check_mode(get_variant("aot"), get_mode("nginx-tls"))  # TLS at the proxy: the app is plain


@pytest.mark.live
@pytest.mark.parametrize("tool", ["k6", "bombardier"])  # k6 switches target; bombardier alternates
def test_an_interleaved_window_holds_a_tls_mode_beside_a_plain_one(tool, tmp_path):
    params = StudyParams.from_dict(
        {"modes": ["kestrel", "kestrel-tls"], "scenarios": ["text"], "tools": [tool],
         "concurrency": [2], "duration_s": 2, "warmup_s": 0, "repetitions": 1,
         "interleave_slice_s": 1, **SHORT_RUNS}
    )  # fmt: skip
    found = run_study(params, "interleaved", tmp_path, progress=False)
    rows = {r["mode"]: r for r in csv.DictReader(found.open())}
    assert all(r["valid"] == "True" for r in rows.values()), rows
    assert rows["kestrel-tls"]["tls_version"] == "TLSv1.3" and rows["kestrel"]["tls_version"] == ""
