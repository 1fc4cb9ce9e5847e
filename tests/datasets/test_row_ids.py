"""Rows known by content: hashes that ignore column and row order, a held-out part chosen by them (not by a
seed), the split around it, and a file's own yes/no holdout column."""

import numpy as np
import pandas as pd
import pytest

from fairops.datasets import load_compas, load_table
from fairops.datasets._custom import holdout_rows
from fairops.datasets._row_ids import content_holdout, row_hashes
from fairops.datasets._splits import split_around, strata
from fairops.jobs._tune.settings import TuneSettings
from fairops.jobs._tune.study import held_out_rows
from fairops.tuning import FairnessObjective


def _compas_frame(n=3000, seed=0):
    data = load_compas()
    rows = np.random.default_rng(seed).choice(len(data.y), n, replace=False)
    return data.X.iloc[rows].reset_index(drop=True).astype(object).assign(label=data.y[rows])


def test_hashes_follow_the_content_not_the_order_or_the_number_type():
    frame = pd.DataFrame({"x": [1, 2, 3], "g": ["a", "b", "a"]})
    shuffled = frame.iloc[[2, 0, 1], ::-1]
    assert (row_hashes(frame)[[2, 0, 1]] == row_hashes(shuffled)).all()
    assert (row_hashes(frame) == row_hashes(frame.astype({"x": float}))).all()
    assert len(set(row_hashes(frame).tolist())) == 3
    changed = frame.assign(x=[1, 2, 4])
    assert (row_hashes(changed) != row_hashes(frame)).tolist() == [False, False, True]
    # the sensitive columns X lacks count; those it holds are not counted twice
    groups = pd.DataFrame({"s": ["p", "q", "p"]})
    assert (row_hashes(frame, groups) == row_hashes(frame.assign(s=groups["s"]))).all()
    assert (row_hashes(frame, frame[["g"]]) == row_hashes(frame)).all()
    with pytest.raises(ValueError, match="sensitive has 2 rows, X has 3"):
        row_hashes(frame, groups.head(2))


def test_the_held_out_rows_do_not_depend_on_the_row_order_and_keep_the_strata(tmp_path):
    frame = _compas_frame()
    y, groups = frame["label"].to_numpy(), frame[["race", "sex"]]
    held = content_holdout(y, groups, row_hashes(frame.drop(columns="label")), share=0.2)
    order = np.random.default_rng(1).permutation(len(frame))
    shuffled = frame.iloc[order].reset_index(drop=True)
    held_shuffled = content_holdout(shuffled["label"].to_numpy(), shuffled[["race", "sex"]],
                                    row_hashes(shuffled.drop(columns="label")), share=0.2)
    assert sorted(order[held_shuffled].tolist()) == held.tolist()  # the same people, wherever they stand
    cells, hashes = strata(y, groups), row_hashes(frame.drop(columns="label"))
    for cell in np.unique(cells):  # each (label, group) cell gives its share, and the copies of its last row
        members = np.flatnonzero(cells == cell)
        inside = np.isin(members, held)
        copies = np.unique(hashes[members], return_counts=True)[1].max()
        assert 0 <= inside.sum() - round(0.2 * len(members)) < copies
        # identical rows of a cell stay together (copies with another label may lie in another cell: a gate
        # leaves those out as seen)
        assert not np.isin(hashes[members[~inside]], hashes[members[inside]]).any()


def test_a_tune_of_a_file_holds_out_the_same_rows_at_every_seed(tmp_path):
    path = tmp_path / "own.csv"
    _compas_frame().to_csv(path, index=False)
    settings = TuneSettings(dataset=None, data=str(path), target="label", sensitive="race,sex")
    data = load_table(path, target="label", sensitive="race,sex")
    held = held_out_rows(settings, data, row_hashes(data.X, data.sensitive))
    parts = {}
    for seed in (0, 1):
        objective = FairnessObjective(data, families=["logistic_regression"], seed=seed, test_rows=held)
        parts[seed] = [objective.rows(part)[0].index.to_numpy() for part in ("train", "validation", "test")]
        assert parts[seed][2].tolist() == held.tolist()
        assert len(np.intersect1d(parts[seed][0], parts[seed][1])) == 0
        assert len(parts[seed][0]) + len(parts[seed][1]) + len(held) == len(data.y)
    assert parts[0][1].tolist() != parts[1][1].tolist()  # the seed still moves train / validation
    assert held_out_rows(TuneSettings(dataset="compas"), load_compas(), None) is None  # bundled: the seed's split


def test_split_around_refuses_what_leaves_nothing_to_train_on():
    y, s = np.array([0, 1] * 10), np.array(["a", "b"] * 10)
    with pytest.raises(ValueError, match="row positions in"):
        split_around(y, s, [25])
    with pytest.raises(ValueError, match="none is left to train on"):
        split_around(y, s, np.arange(20))
    with pytest.raises(ValueError, match="leaves no training rows"):
        split_around(y, s, np.arange(10), validation=0.5)


def test_a_holdout_column_marks_the_test_rows_and_is_no_feature(tmp_path):
    frame = pd.DataFrame({"x": range(8), "g": list("abab" * 2), "y": [0, 1] * 4,
                          "fresh": ["no", "Yes", "no", "no", "TRUE", "0", "1", "false"]})
    path = tmp_path / "own.csv"
    frame.to_csv(path, index=False)
    data = load_table(path, target="y", sensitive="g", holdout="fresh")
    assert data.held_out.tolist() == [1, 4, 6] and "fresh" not in data.X.columns
    assert load_table(path, target="y", sensitive="g").held_out is None
    assert holdout_rows(pd.Series([True, False, True]), "h").tolist() == [0, 2]
    for column, message in [(pd.Series(["yes", "maybe"]), r"found \['maybe'\]"),
                            (pd.Series([1, None]), "missing"), (pd.Series([0, 0]), "marks 0 of 2 rows")]:
        with pytest.raises(ValueError, match=message):
            holdout_rows(column, "h")
    with pytest.raises(ValueError, match="holdout column 'later' not in own.csv"):
        load_table(path, target="y", sensitive="g", holdout="later")
    with pytest.raises(ValueError, match="is the target or a sensitive column"):
        load_table(path, target="y", sensitive="g", holdout="g")
    with pytest.raises(ValueError, match="--holdout names a column of --data FILE"):
        TuneSettings(dataset="german", holdout="fresh")


def test_a_records_hash_reads_the_named_columns_and_the_label_only():
    """Rule fairops-row-v2: the model's inputs and the sensitive columns by name, and the 0/1 label; pandas'
    index written as a column, an ID, the column order and 3 against 3.0 change nothing."""
    from fairops.datasets._row_ids import record_hashes

    frame = pd.DataFrame({"x": [1, 2, 3], "g": ["a", "b", "a"], "s": ["f", "m", "f"]})
    y = np.array([0, 1, 1])
    named = ["x", "g", "s"]
    plain = record_hashes(frame, y, frame[["s"]], named)
    extra = frame.assign(**{"Unnamed: 0": [0, 1, 2], "id": [17, 18, 19]})[["id", "s", "Unnamed: 0", "g", "x"]]
    assert (record_hashes(extra, y, frame[["s"]], list(reversed(named))) == plain).all()
    assert (record_hashes(frame.astype({"x": float}).drop(columns="s"), y, frame[["s"]], named) == plain).all()
    assert (record_hashes(frame, 1 - y, frame[["s"]], named) != plain).all()  # the label is part of the row
    with pytest.raises(ValueError, match=r"the rows lack the column\(s\) \['z'\] a row is known by"):
        record_hashes(frame, y, frame[["s"]], [*named, "z"])
