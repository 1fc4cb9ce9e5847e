import hashlib
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairops.datasets import LOADERS, BudgetSlicer, load_compas, load_dataset, strata, train_validation_test_split
from fairops.datasets._bundle import SHA256, data_path, file_sha256

LOGS = Path(__file__).resolve().parents[2] / "benchmarks" / "reference" / "fair-automl"
EXPECTED_ROWS = {"adult": 45222, "compas": 6172, "german": 1000, "bank": 4521, "credit_default": 30000}
EXPECTED_ROWS.update({"student_mat": 395, "student_por": 649})


@pytest.mark.parametrize("filename", sorted(SHA256))
def test_bundled_files_are_intact(filename):
    assert file_sha256(filename) == SHA256[filename]


def test_bundled_sums_match_the_published_list():
    listing = (data_path("adult.data.gz").parent / "SHA256SUMS").read_text()
    published = dict(reversed(line.split()) for line in listing.splitlines())
    assert set(published) == set(SHA256)
    for filename, digest in SHA256.items():
        assert published[filename] == digest
        assert hashlib.sha256(data_path(filename).read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_loader_contract(name):
    data = load_dataset(name)
    assert len(data.X) == len(data.y) == len(data.sensitive) == EXPECTED_ROWS[name]
    assert set(np.unique(data.y)) == {0, 1}
    assert isinstance(data.X, pd.DataFrame)
    assert not data.X.isna().any().any()
    for column in data.X.columns:
        assert pd.api.types.is_numeric_dtype(data.X[column]) or isinstance(data.X[column].dtype, pd.CategoricalDtype)
    assert set(data.task.sensitive) <= set(data.sensitive.columns)
    for column in data.sensitive.columns:
        labels = data.sensitive[column].cat.categories
        assert len(labels) >= 2 and all(isinstance(label, str) for label in labels)


def test_adult_is_the_paper_task():
    data = load_dataset("adult")
    assert str(data.task) == "precision@tpr=0.5,ratio=tpr" and data.task.sensitive == ("sex",)
    assert sorted(data.sensitive["sex"].cat.categories) == ["Female", "Male"]
    dropped = load_dataset("adult", drop_sensitive=True)
    assert "sex" not in dropped.X.columns and "race" not in dropped.X.columns


def test_adult_keeps_its_own_missing_values_on_request():
    kept = load_dataset("adult", keep_missing=True)
    assert len(kept.y) == 48842 and len(kept.y) - len(load_dataset("adult").y) == 3620
    assert kept.X.isna().sum()[lambda counts: counts > 0].to_dict() == {"workclass": 2799, "occupation": 2809,
                                                                        "native-country": 857}
    assert isinstance(kept.X["workclass"].dtype, pd.CategoricalDtype) and "?" not in kept.X["workclass"].cat.categories


def test_compas_is_the_paper_task():
    data = load_dataset("compas")
    assert str(data.task) == "precision@fpr=0.1,ratio=fpr" and data.task.sensitive == ("race",)


def test_student_data_sensitive_labels_match_the_raw_columns():
    from fairops.datasets import load_student
    from fairops.datasets._bundle import data_path

    for subject, rows in (("mat", 395), ("por", 649)):
        raw = pd.read_csv(data_path(f"student_{subject}_new.csv.gz"))
        data = load_student(subject)
        assert data.name == f"student_{subject}" and len(data.y) == rows
        np.testing.assert_array_equal(data.y, (raw["class"] == "High").astype(int))
        np.testing.assert_array_equal(data.sensitive["sex"] == "female", raw["sex"] == "F")
        np.testing.assert_array_equal(data.sensitive["address"] == "rural", raw["address"] == "R")
        np.testing.assert_array_equal(data.sensitive["age_group"] == "18+", raw["age"] >= 18)
        dropped = load_student(subject, drop_sensitive=True)
        assert {"sex", "address", "age_group"}.isdisjoint(dropped.X.columns) and "age" in dropped.X.columns
    with pytest.raises(ValueError, match="subject must be one of \\['mat', 'por'\\], got 'bio'"):
        load_student("bio")


def _two_group_fpr_ratios(negatives_a, negatives_b, false_positives):
    """Every FPR ratio (lowest / highest) two groups can show when the cut holds a fixed number of false
    positives, rounded like the published logs."""
    ratios = set()
    for k in range(false_positives + 1):
        a, b = k / negatives_a, (false_positives - k) / negatives_b
        ratios.add(round(min(a, b) / max(a, b), 5))
    return ratios


def test_compas_race_grouping_reproduces_the_logged_fairness_levels():
    """At 10% FPR the validation rows hold floor(0.1 x negatives) false positives, so the logged FPR ratios
    pin down how many validation negatives each race group had; the grouping must be the one giving them."""
    evaluations = pd.read_csv(LOGS / "all_tuner_iters_evals_COMPAS.csv.gz")
    assert set(evaluations.target_threshold.dropna()) == {"fpr = 10"}
    logged = set(evaluations.fairness.dropna().round(5))
    assert len(logged) == 56

    data = load_compas()
    negatives = data.y == 0
    validation_negatives = round(0.2 * negatives.sum())  # the paper's 20% validation part of all 6,172 rows
    false_positives = math.floor(0.1 * validation_negatives)
    explained = {n_a: len(logged & _two_group_fpr_ratios(n_a, validation_negatives - n_a, false_positives))
                 for n_a in range(1, validation_negatives // 2 + 1)}
    best = max(explained, key=explained.get)
    assert (best, validation_negatives - best, false_positives) == (254, 419, 67)
    assert explained[best] >= 52 and sorted(explained.values())[-2] <= 5

    # of the groupings "one recorded race vs the rest", Caucasian's share of the negatives is the logged one
    races = data.X.loc[negatives, "race"].value_counts(normalize=True)
    logged_share = best / validation_negatives
    assert races.sub(logged_share).abs().idxmin() == "Caucasian"
    assert abs(races["Caucasian"] - logged_share) < 0.01
    assert list(data.sensitive["race"].cat.categories) == ["Caucasian", "non-Caucasian"]
    groups = data.sensitive.loc[negatives, "race"].value_counts(normalize=True)
    assert groups["Caucasian"] == pytest.approx(races["Caucasian"])


def test_unknown_dataset():
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        load_dataset("nope")


def _toy(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    s = pd.DataFrame({"sex": rng.choice(["F", "M"], n, p=[0.3, 0.7]), "race": rng.choice(["a", "b", "c"], n)})
    y = (rng.random(n) < np.where(s["sex"] == "F", 0.2, 0.4)).astype(int)
    return y, s


def test_split_is_disjoint_complete_reproducible_and_stratified():
    y, s = _toy()
    parts = train_validation_test_split(y, s, validation=0.2, test=0.2, seed=5)
    everything = np.concatenate([parts.train, parts.validation, parts.test])
    assert np.array_equal(np.sort(everything), np.arange(len(y)))
    again = train_validation_test_split(y, s, validation=0.2, test=0.2, seed=5)
    assert np.array_equal(parts.test, again.test)
    cells = strata(y, s)
    for part, share in ((parts.test, 0.2), (parts.validation, 0.2)):
        for cell in np.unique(cells):
            expected = share * (cells == cell).sum()
            assert abs((cells[part] == cell).sum() - expected) <= 1


def test_split_rejects_bad_shares():
    y, s = _toy(100)
    with pytest.raises(ValueError, match="validation \\+ test"):
        train_validation_test_split(y, s, validation=0.5, test=0.5)


def test_budget_slices_are_nested_and_stratified():
    y, s = _toy()
    slicer = BudgetSlicer(y, s, seed=3)
    fractions = [1 / 81, 1 / 27, 1 / 9, 1 / 3, 1.0]
    slices = [slicer.indices(f) for f in fractions]
    for smaller, larger in zip(slices, slices[1:]):
        assert np.isin(smaller, larger).all() and len(smaller) < len(larger)
    assert np.array_equal(slices[-1], np.arange(len(y)))
    cells = strata(y, s)
    for fraction, chosen in zip(fractions, slices):
        for cell in np.unique(cells):
            size = (cells == cell).sum()
            assert (cells[chosen] == cell).sum() == max(1, round(fraction * size))
    with pytest.raises(ValueError, match="fraction must be in"):
        slicer.indices(0)
