"""Command line: python -m hostbench {studies,run,summary,calibrate,reproduce,lab,docs,...}."""

import argparse
import json
import sys
from pathlib import Path

from .errors import exit_code
from .load import TOOLS
from .paths import RUNS


def _cmd_studies(args) -> int:
    from .studies import STUDIES

    for study in STUDIES.values():  # every folder under studies/ with a study.yaml
        profiles = ", ".join(study.profiles()) or "-"
        notebook = study.notebook if study.notebook_path.is_file() else "(no notebook yet)"
        print(f"{study.id:24} profiles: {profiles:14} {notebook:38} {study.title}")
    return 0


def _cmd_run(args) -> int:
    from .harness.notebook import ensure_builds
    from .harness.preflight import check_runnable
    from .harness.study import run_study
    from .params import check_run_id, params_with_settings
    from .studies import get_study

    check_run_id(args.run_id)
    overrides = {"url": args.url} if args.url else {}
    if args.allow_remote:
        overrides["allow_remote"] = True
    path, study = Path(args.params), args.study
    if not path.suffix and "/" not in args.params:  # a study id: its profile
        study = get_study(args.params).id
        path = get_study(study).params_path(args.profile)
    elif study is not None:
        study = get_study(study).id
    params = check_runnable(params_with_settings(path, args.set, overrides))
    ensure_builds(params)  # each runtime's and runtime variant's build, published when missing
    results = run_study(
        params,
        args.run_id,
        Path(args.runs_dir),
        progress=not args.no_progress,
        discard_old=args.discard_old,
        study=study,
    )
    print(f"results: {results}")
    return 0


def _cmd_calibrate(args) -> int:
    from .analysis.prose import calibration_note
    from .analysis.tables import calibration, calibration_findings, load_results
    from .harness.preflight import check_runnable
    from .harness.study import run_study
    from .params import StudyParams, check_run_id

    raw = {
        "modes": args.mode,
        "scenarios": args.scenario or ["text"],
        "tools": [args.tool],
        "concurrency": args.levels,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "repetitions": args.blocks,
        "min_duration_s": min(args.duration, 5.0),  # each level as long as asked
        "quiet_max_cores": args.quiet_max_cores,
    }
    params = check_runnable(StudyParams.from_dict(raw))
    run_id = check_run_id(args.run_id)
    results = load_results(run_study(params, run_id, Path(args.runs_dir), progress=True))
    table = calibration(results)
    columns = ["mode", "scenario", "concurrency", "rps_mean", "latency_p99_ms_mean",
               "cpu_total_pct_mean", "cpu_loadgen_cores_mean", "knee", "saturated"]  # fmt: skip
    print(table[columns].to_string(index=False, float_format=lambda v: f"{v:,.1f}"))
    print(calibration_note(calibration_findings(table)).replace("**", ""))
    return 0


def _cores_or_off(text: str) -> float | None:
    if text == "off":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of cores, or off") from None


def _cmd_doctor(args) -> int:
    from .harness.measure.quiet import doctor, doctor_hosts

    limits = (args.quiet_max_cores, args.quiet_max_steal_pct, args.seconds)
    rows, quiet = doctor_hosts(args.inventory, *limits) if args.inventory else doctor(*limits)
    width = max(len(what) for what, _ in rows)
    for what, reading in rows:
        print(f"{what:<{width}}  {reading}")
    return 0 if quiet else 1


def _cmd_env(args) -> int:
    from .harness.environment import collect

    print(json.dumps(collect(), indent=2))
    return 0


def _cmd_modes(args) -> int:
    from .catalog import MODES, runnable_here

    here = set(runnable_here())
    for mode in MODES.values():
        where = "runs here" if mode.id in here else "Windows only"
        print(f"{mode.id:18} {where:13} {mode.summary}")
    return 0


def _cmd_reproduce(args) -> int:
    from .errors import BadInput
    from .reproduce import plan_text, reproduce

    if args.plan:  # how long it would take, measuring nothing
        if args.render_only or args.discard_old:
            raise BadInput("--plan says how long a run would take and measures nothing; it "
                           "takes no --render-only or --discard-old")  # fmt: skip
        print(plan_text(args.study, args.profile, args.set))
        return 0
    out = reproduce(
        args.study,
        args.profile,
        run_id=args.run_id,
        runs_dir=Path(args.runs_dir),
        discard_old=args.discard_old,
        render_only=args.render_only,
        settings=args.set,
    )
    print(f"report: {out / 'report.html'}")
    return 0


def _cmd_reproduce_all(args) -> int:
    from .reproduce import batch_plan_text, reproduce_all

    if args.plan:  # each study's time and the batch's, measuring nothing
        print(batch_plan_text(args.profile, args.study, args.set))
        return 0
    index = reproduce_all(
        args.profile,
        batch_id=args.batch_id,
        runs_dir=Path(args.runs_dir),
        only=args.study,
        settings=args.set,
    )
    print(f"index: {index}")
    return 0


def _cmd_lab(args) -> int:
    from .lab import parse_what_if, reproduce_lab

    what_ifs = dict(parse_what_if(text) for text in args.what_if)
    out = reproduce_lab(args.profile, args.run_id, Path(args.runs_dir), what_ifs, args.set)
    print(f"report: {out / 'report.html'}")
    return 0


def _cmd_check_report(args) -> int:
    from .pagecheck import check_report

    failed = 0
    for page in args.pages:
        found = check_report(page, forbidden=args.forbid, browser=not args.no_browser)
        for defect in found:
            print(f"{page}: {defect}")
        print(f"{page}: {len(found)} defect(s)" if found else f"{page}: reads cleanly")
        failed += bool(found)
    return 1 if failed else 0


def _cmd_summary(args) -> int:
    from .analysis.tables import write_ratios
    from .params import check_run_id

    path = write_ratios(Path(args.runs_dir) / check_run_id(args.run_id), args.baseline)
    print(path.read_text(), end="")
    print(f"ratios: {path}")
    return 0


def _cmd_compare(args) -> int:
    from .analysis import claims_across_runs, compare, verdicts

    runs_dir = Path(args.runs_dir)
    runs = [compare.identify(compare.find_run(r, runs_dir)) for r in args.runs]
    if len(runs) == 1:  # a reader's run: against the committed example of its study
        runs.insert(0, compare.identify(compare.committed_example(runs[0], runs_dir)))
    out = Path(args.out) if args.out else runs_dir / f"compare-{runs[-1].name}"
    tolerance = verdicts.TOLERANCE_PCT if args.tolerance is None else args.tolerance
    table = compare.write(runs, out, tolerance)
    print(compare.text_table(table))
    judged = compare.claim_verdicts(runs)
    if judged is not None:
        print(claims_across_runs.text(judged))
    differences = compare.differences(runs)
    if not differences.empty:
        print("what differed:")
        print(differences.to_string(index=False))
    print(f"compared: {out / 'compare.csv'}, {out / 'figures' / 'compare.png'}")
    return 0


def _cmd_pdf(args) -> int:
    from .printable import write_pdf

    folders = [Path(f) for f in args.run_dirs]
    # Given several (data/runs/example-*/), a sub-study's folder without a report is skipped.
    for folder in folders:
        if len(folders) > 1 and not (folder / "report.html").is_file():
            print(f"skipped {folder}: no report.html")
            continue
        print(f"wrote {write_pdf(folder)}")
    return 0


def _cmd_docs(args) -> int:
    from .docs import write

    for path in write():
        print(f"wrote {path}")
    return 0


def _add_plan(command) -> None:
    command.add_argument(
        "--plan",
        action="store_true",
        help="say how long it would take on this machine (the committed runs on record, the "
        "profile's budget) and measure nothing",
    )


def _add_set(command, scope: str) -> None:
    command.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"a params key over {scope}: the value as in a params file (YAML), e.g. "
        "duration_s=5 or modes=[kestrel,nginx]; repeatable; the study's own keys: its "
        "sub-studies inherit them unless they set them (no dotted sub-study keys); recorded in "
        "params.json and named in the report",
    )


def parser() -> argparse.ArgumentParser:
    from .studies import DEFAULT_STUDY

    p = argparse.ArgumentParser(prog="python -m hostbench", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("studies", help="list the studies, their profiles and notebooks").set_defaults(
        func=_cmd_studies
    )
    run = sub.add_parser("run", help="run (or resume) a study without its notebook")
    run.add_argument("params", help="a params YAML file, or a study id (see `studies`)")
    run.add_argument("--profile", default="paper", help="with a study id: paper, quick, ...")
    run.add_argument("--run-id", required=True, help="folder name under the runs dir")
    run.add_argument(
        "--study", help="with a params file: the study whose claims stop_when_decided judges"
    )
    run.add_argument("--runs-dir", default=str(RUNS), help="default: data/runs")
    run.add_argument("--url", help="external/IIS modes: the URL of your server")
    run.add_argument("--allow-remote", action="store_true", help="permit a non-loopback URL")
    _add_set(run, "the params file or profile")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument(
        "--discard-old", action="store_true", help="delete runs measured with other settings"
    )
    run.set_defaults(func=_cmd_run)
    summary = sub.add_parser("summary", help="ratios to the baseline with 95%% intervals")
    summary.add_argument("run_id", help="a run folder under the runs dir")
    summary.add_argument("--baseline", help="default: the study's baseline (params.json)")
    summary.add_argument("--runs-dir", default=str(RUNS), help="default: data/runs")
    summary.set_defaults(func=_cmd_summary)
    cal = sub.add_parser("calibrate", help="sweep concurrency: where throughput stops growing")
    cal.add_argument("--mode", action="append", required=True, help="repeat for several")
    cal.add_argument("--scenario", action="append", help="repeat for several; default: text")
    cal.add_argument("--tool", default="k6", help=", ".join(TOOLS))
    cal.add_argument("--levels", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    cal.add_argument("--duration", type=float, default=5, help="seconds per level")
    cal.add_argument("--warmup", type=float, default=10, help="longest warm-up per level")
    cal.add_argument("--blocks", type=int, default=3, help="repetitions of the sweep")
    cal.add_argument(
        "--quiet-max-cores",
        type=_cores_or_off,
        default=0.1,
        help="wait for the machine to be this quiet before each level ('off': record only)",
    )
    cal.add_argument("--run-id", default="calibration", help="folder under the runs dir")
    cal.add_argument("--runs-dir", default=str(RUNS), help="default: data/runs")
    cal.set_defaults(func=_cmd_calibrate)
    comp = sub.add_parser("compare", help="did a re-run reproduce? ratios of runs of one study")
    comp.add_argument("runs", nargs="+", help="run folders; the first is the reference (one "
                      "run alone: compared with its study's committed paper run)")  # fmt: skip
    comp.add_argument(
        "--tolerance",
        type=float,
        default=None,
        help="the band around 100%% that counts as reproduced, in %%; default 10",
    )
    comp.add_argument("--out", help="default: <runs dir>/compare-<last run>")
    comp.add_argument("--runs-dir", default=str(RUNS), help="default: data/runs")
    comp.set_defaults(func=_cmd_compare)
    doc = sub.add_parser("doctor", help="is this machine quiet enough to measure? (exit 1: no)")
    doc.add_argument("--quiet-max-cores", type=float, default=0.1, help="foreign CPU limit")
    doc.add_argument("--quiet-max-steal-pct", type=float, default=5.0, help="steal limit, %%")
    doc.add_argument("--seconds", type=int, default=3, help="how long to watch")
    doc.add_argument("--inventory", help="an ssh inventory (docs/hosts.md): read its two hosts")
    doc.set_defaults(func=_cmd_doctor)
    sub.add_parser("env", help="print this machine's environment").set_defaults(func=_cmd_env)
    sub.add_parser("modes", help="list the hosting modes").set_defaults(func=_cmd_modes)
    rep = sub.add_parser("reproduce", help="run a study's notebook with papermill")
    rep.add_argument("--study", default=DEFAULT_STUDY, help="a study id (see `studies`)")
    rep.add_argument(
        "--profile",
        default="paper",
        help="studies/<study>/params/<profile>.yaml, or a params file's path (.yaml)",
    )
    rep.add_argument("--run-id", help="default: <study>-<profile>-<UTC timestamp>")
    rep.add_argument("--runs-dir", default=str(RUNS), help="default: data/runs")
    rep.add_argument(
        "--discard-old", action="store_true", help="delete runs measured with other settings"
    )
    rep.add_argument(
        "--render-only",
        action="store_true",
        help="re-render a complete run from its own data; never measure",
    )
    _add_plan(rep)
    _add_set(rep, "the profile")
    rep.set_defaults(func=_cmd_reproduce)
    everything = sub.add_parser("reproduce-all", help="every study's notebook in one batch")
    everything.add_argument(
        "--profile", default="paper", help="paper, claims, scope, quick: the studies with it"
    )
    everything.add_argument("--batch-id", help="default: all-<profile>-<UTC timestamp>")
    everything.add_argument("--runs-dir", default=str(RUNS), help="default: data/runs")
    everything.add_argument("--study", action="append", help="only this study (repeatable)")
    _add_plan(everything)
    _add_set(everything, "each study's profile (STUDY:KEY=VALUE: that study's alone)")
    everything.set_defaults(func=_cmd_reproduce_all)
    lab = sub.add_parser("lab", help="run the hosting lab notebook (docs/teaching.md)")
    lab.add_argument("--profile", default="quick", help="quick (a few minutes) or class")
    lab.add_argument("--run-id", help="default: lab-<profile>-<UTC timestamp>")
    lab.add_argument("--runs-dir", default=str(RUNS), help="default: data/runs")
    lab.add_argument(
        "--what-if",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a notebook parameter, e.g. nginx_workers=1, log_level=Debug, modes=[kestrel,nginx]",
    )
    _add_set(lab, "the lab's profile, after the what-ifs")
    lab.set_defaults(func=_cmd_lab)
    sub.add_parser(
        "docs",
        help="write docs/results.md, docs/params.md, the studies' paper-run lines, the gallery "
        "(docs/gallery/) and docs/artifact.md",
    ).set_defaults(func=_cmd_docs)
    pdf = sub.add_parser("pdf", help="report.pdf beside a run folder's report.html (Chromium)")
    pdf.add_argument("run_dirs", nargs="+", help="run folders with a report.html")
    pdf.set_defaults(func=_cmd_pdf)
    check = sub.add_parser("check-report", help="a report page's defects (exit 1: some)")
    check.add_argument("pages", nargs="+", help="report.html or index.html files")
    check.add_argument("--forbid", action="append", default=[],
                       help="text the page must not contain, e.g. the runs folder")  # fmt: skip
    check.add_argument("--no-browser", action="store_true", help="skip the 1280 px layout check")
    check.set_defaults(func=_cmd_check_report)
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    return exit_code(lambda: args.func(args),
                     "interrupted: completed runs are kept; the same command resumes")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
