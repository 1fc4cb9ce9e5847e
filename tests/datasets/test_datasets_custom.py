import numpy as np
import pandas as pd
import pytest

from fairops.datasets import load_table


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "income": rng.normal(size=50),
        "city": rng.choice(["x", "y"], 50),
        "sex": rng.choice(["F", "M"], 50),
        "race": rng.choice(["a", "b", "c"], 50),
        "label": rng.choice(["no", "yes"], 50),
    })
    return frame


def test_csv_and_parquet_give_the_same_dataset(table, tmp_path):
    table.to_csv(tmp_path / "d.csv", index=False)
    table.to_parquet(tmp_path / "d.parquet")
    a = load_table(tmp_path / "d.csv", target="label", sensitive="sex,race", task="recall@fpr=0.1,ratio=fpr")
    b = load_table(tmp_path / "d.parquet", target="label", sensitive=["sex", "race"], task="recall@fpr=0.1,ratio=fpr")
    assert np.array_equal(a.y, (table["label"] == "yes").to_numpy())
    assert np.array_equal(a.y, b.y)
    assert list(a.sensitive.columns) == ["sex", "race"] and a.task.sensitive == ("sex", "race")
    assert str(a.task) == "recall@fpr=0.1,ratio=fpr"
    assert isinstance(a.X["city"].dtype, pd.CategoricalDtype)


@pytest.mark.parametrize(
    "change, kwargs, message",
    [
        (lambda t: t, {"target": "nope", "sensitive": "sex"}, r"column\(s\) \['nope'\] not in"),
        (lambda t: t, {"target": "label", "sensitive": "colour"}, r"column\(s\) \['colour'\] not in"),
        (lambda t: t.assign(label=np.arange(50) % 3), {"target": "label", "sensitive": "sex"},
         "exactly two classes, found 3"),
        (lambda t: t.assign(sex="F"), {"target": "label", "sensitive": "sex"}, "'sex' has a single value"),
        (lambda t: t.assign(sex=[None] + ["F"] * 49), {"target": "label", "sensitive": "sex"},
         "'sex' of d.csv has 1 missing value in 50 rows"),
        (lambda t: t, {"target": "label", "sensitive": "sex", "task": "accuracy"}, "task spec"),
        (lambda t: t, {"target": "label", "sensitive": "sex,label"}, "'label' is the target column"),
        (lambda t: t, {"target": "label", "sensitive": "sex,sex"}, r"\['sex'\] named more than once"),
    ],
)
def test_bad_tables_are_refused_by_name(table, tmp_path, change, kwargs, message):
    change(table).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(ValueError, match=message):
        load_table(tmp_path / "d.csv", **kwargs)


def test_bad_paths(tmp_path):
    with pytest.raises(ValueError, match="must end in one of"):
        load_table(tmp_path / "d.xlsx", target="y", sensitive="s")
    with pytest.raises(ValueError, match="does not exist"):
        load_table(tmp_path / "d.csv", target="y", sensitive="s")


def test_empty_and_header_only_files_are_named_with_what_to_do(table, tmp_path, capsys):
    from fairops.cli import main

    (tmp_path / "empty.csv").write_text("")
    table.head(0).to_csv(tmp_path / "header.csv", index=False)
    for name, message in [("empty.csv", "is empty: give a header line naming the columns"),
                          ("header.csv", "has a header but 0 rows (columns: ['income', 'city', 'sex', 'race', "
                                         "'label']); add the rows")]:
        code = main(["tune", "--data", str(tmp_path / name), "--target", "label", "--sensitive", "sex",
                     "--project-dir", str(tmp_path / "p")])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert name in err and message in err


def test_missing_sensitive_values_are_counted_and_located(table, tmp_path):
    table.loc[[3, 17], "race"] = None
    table.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(ValueError) as error:
        load_table(tmp_path / "d.csv", target="label", sensitive="sex,race")
    assert str(error.value) == ("sensitive column 'race' of d.csv has 2 missing values in 50 rows (rows 3, 17); "
                                "fairness is measured per group and these rows have none: give --missing-group "
                                "NAME to make them a group of their own, or drop those rows")


def test_missing_sensitive_values_become_a_named_group_on_request(table, tmp_path):
    table.loc[[3, 17], "race"] = None
    table.to_csv(tmp_path / "d.csv", index=False)
    data = load_table(tmp_path / "d.csv", target="label", sensitive="sex,race", missing_group="unknown")
    assert data.sensitive["race"].tolist()[3] == data.sensitive["race"].tolist()[17] == "unknown"
    assert (data.sensitive["race"] == "unknown").sum() == 2
    assert data.X["race"].tolist()[3] == "unknown" and not data.X["race"].isna().any()  # the feature says so too
    with pytest.raises(ValueError, match="--missing-group 'a' is already a value of sensitive column 'race'"):
        load_table(tmp_path / "d.csv", target="label", sensitive="race", missing_group="a")


def test_rows_without_a_label_are_left_out_and_counted(table, tmp_path):
    table.loc[[0, 5, 9], "label"] = None
    table.loc[[1, 2], "income"] = None  # a feature's missing values stay
    table["fresh"] = np.arange(50) % 5 == 0
    table.to_csv(tmp_path / "d.csv", index=False)
    data = load_table(tmp_path / "d.csv", target="label", sensitive="sex", holdout="fresh")
    kept = table.drop(index=[0, 5, 9]).reset_index(drop=True)
    assert data.unlabelled == 3 and len(data.y) == 47
    assert np.array_equal(data.y, (kept["label"] == "yes").to_numpy())
    assert data.X["income"].isna().sum() == 2
    assert data.held_out.tolist() == np.flatnonzero(kept["fresh"].to_numpy()).tolist()  # positions after the drop
    table["label"] = None
    table.to_csv(tmp_path / "empty.csv", index=False)
    with pytest.raises(ValueError, match="target column 'label' is empty"):
        load_table(tmp_path / "empty.csv", target="label", sensitive="sex")
