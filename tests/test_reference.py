"""Each study's reference/: the published numbers load, are well-formed and trace to their seeds."""

import re
import shutil

import pandas as pd
import pytest

from hostbench.analysis import reference
from hostbench.errors import BadInput
from hostbench.paths import ROOT
from hostbench.studies import STUDIES, Study, available

SEEDS = ROOT.parent / "shared" / "seeds"
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"{SEEDS} not present")


def normalize(text: str) -> str:
    """Join words hyphenated across a line break ("10-\\n\\n20%"), then collapse whitespace."""
    text = re.sub(r"-[ \t]*\n\s*", "-", text)
    return re.sub(r"\s+", " ", text).strip()


def test_published_loads_with_columns_and_dtypes():
    df = reference.load_reference()
    assert list(df.columns) == reference.PUBLISHED_COLUMNS
    for col in reference.NUMBER_COLUMNS:
        assert df[col].dtype == "float64", col
    for col in reference.TEXT_COLUMNS:
        assert pd.api.types.is_string_dtype(df[col]), col
        assert not df[col].isna().any(), col
    assert set(df["article"]) == set(STUDIES)  # every study has its article's numbers
    assert {(s.id, s.article) for s in STUDIES.values()} == set(
        zip(df["article"], df["source_file"], strict=True)
    )


def test_every_row_has_a_value_or_a_range():
    df = reference.load_reference()
    point = df["value"].notna()
    ranged = df["value_low"].notna() & df["value_high"].notna()
    assert (point ^ ranged).all()
    assert (df.loc[ranged, "value_low"] <= df.loc[ranged, "value_high"]).all()


@pytest.mark.parametrize("study", available(), ids=lambda s: s.id)
def test_filter_by_article(study):
    df = reference.load_reference(study.id)
    assert len(df) and set(df["article"]) == {study.id}
    with pytest.raises(BadInput, match="unknown study 'no-such-article'"):
        reference.load_reference("no-such-article")


@needs_seeds
def test_source_files_exist():
    for name in set(reference.load_reference()["source_file"]) | set(
        reference.load_setup()["source_file"]
    ):
        assert (SEEDS / name).is_file(), name


@needs_seeds
@pytest.mark.parametrize("loader", [reference.load_reference, reference.load_setup])
def test_quotes_are_verbatim(loader):
    texts = {}
    missing = []
    for r in loader().itertuples(index=False):
        if r.source_file not in texts:
            texts[r.source_file] = normalize((SEEDS / r.source_file).read_text(encoding="utf-8"))
        if normalize(r.quote) not in texts[r.source_file]:
            missing.append((r.article, r.quote))
    assert not missing


@needs_seeds
def test_numbers_appear_in_their_quotes():
    """Every value of a rps/ratio row is written in its quote (as stated, not converted)."""
    df = reference.load_reference()
    for r in df.itertuples(index=False):
        if r.metric not in {"rps", "rps_gain_pct", "rps_loss_pct"}:
            continue
        numbers = [r.value] if pd.notna(r.value) else [r.value_low, r.value_high]
        for n in numbers:
            digits = re.findall(r"\d+(?:\.\d+)?", r.quote)
            assert any(float(d) == n for d in digits), (r.article, r.setup, n, r.quote)


@needs_seeds
def test_numeric_settings_appear_in_their_quotes():
    """Every setting stated as a plain number (connections, duration, requests) is written in
    its quote, as stated."""
    for r in reference.load_setup().itertuples(index=False):
        if re.fullmatch(r"\d+(?:\.\d+)?", str(r.value)):
            digits = re.findall(r"\d+(?:\.\d+)?", r.quote)
            assert any(float(d) == float(r.value) for d in digits), (r.article, r.item, r.quote)


def test_bad_rows_are_rejected(tmp_path):
    study = available()[0]
    copy = tmp_path / study.id
    shutil.copytree(study.folder, copy, ignore=shutil.ignore_patterns("fixtures", "__pycache__"))
    published = copy / "reference" / reference.PUBLISHED_CSV
    rows = pd.read_csv(published, dtype=str, keep_default_na=False)
    rows.iloc[:1].assign(mode="kestrl").to_csv(published, index=False)  # one row, misspelt
    with pytest.raises(BadInput, match="row 2: mode 'kestrl'"):
        reference.load_reference(Study.from_folder(copy))


# ------------------------------------------------------------------ claims.csv


def _with_claims() -> list[Study]:
    return [s for s in available() if (s.reference_dir / reference.CLAIMS_CSV).is_file()]


@needs_seeds
@pytest.mark.parametrize("study", _with_claims(), ids=lambda s: s.id)
def test_claim_quotes_are_verbatim(study):
    """Every claim's quote is in its seed as written (whitespace collapsed, a word hyphenated
    across a line break joined), as the published numbers' quotes are."""
    text = normalize((SEEDS / study.article).read_text(encoding="utf-8"))
    claims = reference.load_claims(study)
    missing = [q for q in dict.fromkeys(claims["quote"]) if normalize(q) not in text]
    assert not missing


def _paper_baseline(study: Study) -> str:
    from hostbench.params import StudyParams

    return StudyParams.from_file(study.params_path("paper")).baseline_mode


def _published_value(claim, published: pd.DataFrame, baseline: str) -> float | None:
    """The ratio the article's own numbers give a size claim, or None where published.csv has
    none for it: a stated gain or loss whose quote holds the claim's quote (the same scenario),
    else the quotient of the two requests/s rows whose quotes the claim's quote holds (its
    mode over the one it is relative to), to three figures."""
    quote = normalize(claim.quote)
    same = published[published["scenario"] == claim.scenario] if claim.scenario else published
    for r in same.itertuples(index=False):
        if quote in normalize(r.quote) and r.metric in ("rps_gain_pct", "rps_loss_pct"):
            sign = 1 if r.metric == "rps_gain_pct" else -1
            return 1 + sign * r.value / 100
    relative = baseline if claim.relative_to == reference.RUN_BASELINE else claim.relative_to
    quoted = published[(published["metric"] == claim.metric)
                       & published["quote"].map(lambda q: normalize(q) in quote)]  # fmt: skip
    by_mode = quoted.set_index("mode")["value"]
    if by_mode.index.has_duplicates or not {claim.mode, relative} <= set(by_mode.index):
        return None
    return float(f"{by_mode[claim.mode] / by_mode[relative]:.3g}")


@pytest.mark.parametrize("study", _with_claims(), ids=lambda s: s.id)
def test_size_claims_are_the_articles_published_numbers(study):
    """A size claim's value is the ratio the article's own published numbers give, where
    published.csv holds them (linux-proxies-2021: 3509 / 10667 -> 0.329; selfhost-2012's
    "approximately 50%" -> 1.50)."""
    claims = reference.load_claims(study)
    published = reference.load_reference(study.id)
    baseline = _paper_baseline(study)
    checked = []
    for claim in claims[claims["kind"] == "size"].itertuples(index=False):
        expected = _published_value(claim, published, baseline)
        if expected is not None:
            assert claim.value == pytest.approx(expected, abs=1e-9), (claim.claim, expected)
            checked.append(claim.claim)
    if study.id in ("linux-proxies-2021", "selfhost-2012"):  # each size claim has its numbers
        assert set(checked) == set(claims.loc[claims["kind"] == "size", "claim"])
    if not checked:
        pytest.skip(f"{study.id}: no size claim with published numbers")


def test_a_claims_file_with_a_bad_row_is_rejected(tmp_path):
    study = _with_claims()[0]
    copy = tmp_path / study.id
    shutil.copytree(study.folder, copy, ignore=shutil.ignore_patterns("fixtures", "__pycache__"))
    path = copy / "reference" / reference.CLAIMS_CSV
    rows = pd.read_csv(path, dtype=str, keep_default_na=False)
    testable = rows[rows["kind"] != "not testable"].iloc[:1]
    testable.assign(value="0").to_csv(path, index=False)
    with pytest.raises(BadInput, match="row 2: value"):
        reference.load_claims(Study.from_folder(copy))
    # A claim between two variants names both.
    testable.assign(variant="trace-id").to_csv(path, index=False)
    with pytest.raises(BadInput, match="row 2: a claim between two variants names both"):
        reference.load_claims(Study.from_folder(copy))


def test_a_claims_file_is_read_as_it_is_now_and_each_caller_gets_its_own_rows(tmp_path):
    # load_claims keeps what it read by the file's content (kept.py).
    study = _with_claims()[0]
    first = reference.load_claims(study)
    first.loc[:, "claim"] = "edited by a caller"
    assert "edited by a caller" not in set(reference.load_claims(study)["claim"])
    copy = tmp_path / study.id
    shutil.copytree(study.folder, copy, ignore=shutil.ignore_patterns("fixtures", "__pycache__"))
    path = copy / "reference" / reference.CLAIMS_CSV
    rows = pd.read_csv(path, dtype=str, keep_default_na=False)
    rows.iloc[:1].to_csv(path, index=False)
    assert len(reference.load_claims(Study.from_folder(copy))) == 1 < len(first)
