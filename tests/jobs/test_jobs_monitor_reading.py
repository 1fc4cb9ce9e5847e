"""fairops monitor's file reading: windows cut across chunks equal the file's rows in order, CSV and Parquet
read the same, and a time column orders the windows whether or not the file is sorted by it."""

import numpy as np
import pandas as pd
import pytest

from fairops.jobs import _monitor as job


@pytest.fixture()
def table():
    rng = np.random.default_rng(0)
    n = 1037
    return pd.DataFrame({"x": rng.normal(size=n), "sex": rng.choice(["f", "m"], n), "y": rng.integers(0, 2, n),
                         "t": rng.permutation(n)})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_windows_across_chunks_are_the_rows_in_file_order(table, tmp_path, suffix, monkeypatch):
    path = tmp_path / f"rows{suffix}"
    table.to_csv(path, index=False) if suffix == ".csv" else table.to_parquet(path, index=False)
    monkeypatch.setattr(job, "CHUNK_ROWS", 97)  # windows of 100 straddle chunk borders
    chunks = list(job.read_chunks(path, job.CHUNK_ROWS))
    assert max(len(c) for c in chunks) == 97
    windows = list(job.file_windows(path, 100, "y", ["sex"]))
    assert [len(y) for _, y, _ in windows] == [100] * 10 + [37]
    X = pd.concat([w[0] for w in windows], ignore_index=True)
    assert np.array_equal(X["x"].to_numpy(), table["x"].to_numpy()) and "y" not in X
    assert np.array_equal(np.concatenate([y for _, y, _ in windows]), table["y"].to_numpy())


def test_a_time_column_orders_the_windows_sorted_or_not(table, tmp_path):
    shuffled, ordered = tmp_path / "shuffled.csv", tmp_path / "ordered.csv"
    table.to_csv(shuffled, index=False)
    table.sort_values("t").to_csv(ordered, index=False)
    assert not job._time_sorted(shuffled, "t") and job._time_sorted(ordered, "t")
    for path in (shuffled, ordered):
        times = np.concatenate([X["t"].to_numpy() for X, _, _ in job.file_windows(path, 200, "y", ["sex"],
                                                                                   time_column="t")])
        assert np.array_equal(times, np.arange(len(table)))


def test_missing_columns_and_bad_files_are_named(table, tmp_path):
    path = tmp_path / "rows.csv"
    table.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"\['race'\] not in rows.csv"):
        next(job.file_windows(path, 100, "y", ["race"]))
    other = tmp_path / "rows.json"
    other.write_text("{}")
    with pytest.raises(ValueError, match="must end in .csv or .parquet"):
        next(job.read_chunks(other))
    with pytest.raises(ValueError, match="does not exist"):
        next(job.read_chunks(tmp_path / "absent.csv"))


ISO_FORMS = ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%f", "%Y%m%dT%H%M%S",
             "%G-W%V-%uT%H:%M:%S", "%Y-%jT%H:%M:%S"]


def test_a_text_time_column_in_any_iso_form_orders_the_windows(table, tmp_path):
    """Text times in six ISO 8601 forms (calendar, basic, week and ordinal dates), and an offset: each row's
    instant orders it, as the integer column ``t`` does."""
    start = pd.Timestamp("2024-12-30")  # an ISO year that starts in the calendar year before
    moments = [start + pd.Timedelta(hours=int(t)) for t in table["t"]]
    text = [moment.strftime(ISO_FORMS[i % len(ISO_FORMS)]) for i, moment in enumerate(moments)]
    text[7] = (moments[7] + pd.Timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S+02:00")  # the same instant
    path = tmp_path / "times.csv"
    table.assign(when=text).to_csv(path, index=False)
    assert not job._time_sorted(path, "when")
    times = np.concatenate([X["t"].to_numpy() for X, _, _ in job.file_windows(path, 200, "y", ["sex"],
                                                                               time_column="when")])
    assert np.array_equal(times, np.arange(len(table)))


def test_each_windows_rows_keep_their_row_in_the_file(table, tmp_path):
    path = tmp_path / "rows.csv"
    table.to_csv(path, index=False)
    windows = list(job.file_windows(path, 100, "y", ["sex"], time_column="t"))
    rows = np.concatenate([X.index.to_numpy() for X, _, _ in windows])
    assert np.array_equal(table["t"].to_numpy()[rows], np.arange(len(table)))


@pytest.mark.parametrize("value, words", [
    ("yesterday", "time column 'when' of times.csv holds 'yesterday' in row 40, not a time in ISO 8601 form"),
    ("", "time column 'when' of times.csv has a missing value in row 40"),
    ("2024-13-01", "holds '2024-13-01' in row 40"),
])
def test_a_value_that_is_not_a_time_is_refused_by_its_row(table, tmp_path, value, words):
    text = [f"2024-01-01T{i // 60 % 24:02d}:{i % 60:02d}:00" for i in range(len(table))]
    text[40] = value
    path = tmp_path / "times.csv"
    table.assign(when=text).to_csv(path, index=False)
    with pytest.raises(ValueError, match=words):
        next(job.file_windows(path, 100, "y", ["sex"], time_column="when"))
