"""Bias reduction over any classifier: the exponentiated gradient and grid search reductions.

Agarwal et al. (2018), "A Reductions Approach to Fair Classification", turn fair classification into a
game between a classifier player (who answers Lagrange multipliers with a cost-sensitive fit of the base
estimator, through sample weights) and a multiplier player. :class:`ExponentiatedGradient` plays it to a
small duality gap and returns a weighted set of predictors; :class:`GridSearch` fits one predictor per
point of a grid of multipliers and keeps the best. Both are scikit-learn classifiers:
``fit(X, y, sensitive_features=...)`` (the groups are needed to fit, never to predict), ``predict_proba``
and ``predict`` deterministic (:mod:`fairops.reductions._base` says which score), constraints for every
fairness ratio the task grammar names (``"tpr"``, ``"fpr"``, ``"ppr"``) as a difference or a ratio bound,
over several attributes (:mod:`fairops.reductions._constraints`).

Any base estimator whose ``fit`` takes ``sample_weight`` works: every family fairops tunes (logistic
regression, decision tree, random forest, LightGBM, the network, the SCAFF forest).

What differs from fairlearn 0.15's ``ExponentiatedGradient`` / ``GridSearch``, which the tests use as
the oracle (same base estimator, data and settings: the same predictors and weights):

- ``predict`` is deterministic and ``predict_proba`` exists for both (fairlearn's ``predict`` draws at
  random and its only score, ``_pmf_predict``, is private and takes at most ``2^k`` values): the
  default score is ``_pmf_predict``'s, its ties broken by a hash of each row (it moves a score by less
  than 1e-10), so a threshold inside a tie decides the same rows in evaluation and in serving.
- Several attributes are constrained each on its own (``groups="lowest"``, every attribute's ratio held)
  or as combined groups (``"intersectional"``, fairlearn's only way: it joins the columns into one).
- ``nu``, ``eps`` and every other parameter stay as given (fairlearn writes the automatic ``nu`` back into
  its parameter); the value used is ``nu_``.
- Labels may be any two classes (fairlearn asks for 0/1); a sensitive column with one value, or with
  missing values, is refused by name.
- A best response whose relabelled rows are all of one class is the constant predictor, as in fairlearn
  (scikit-learn's ``DummyClassifier``).
- NumPy in place of pandas: the same numbers, several times faster around the base fits
  (``benchmarks/reductions_speed.py``).

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> sex = rng.choice(["F", "M"], 3000); X = np.column_stack([rng.normal(size=3000) + (sex == "M"), sex == "M"])
>>> y = (X[:, 0] + rng.normal(size=3000) > 0.5).astype(int)
>>> model = ExponentiatedGradient(constraint="tpr", random_state=0).fit(X, y, sensitive_features={"sex": sex})
>>> from fairops.metrics import fairness_ratio
>>> bool(fairness_ratio(y, model.predict(X), {"sex": sex}, rate="tpr") > 0.9)
True
"""

from ._exponentiated_gradient import ExponentiatedGradient
from ._grid_search import GridSearch

__all__ = ["ExponentiatedGradient", "GridSearch"]
