"""SCAFF: fair decision trees and forests with a label-vs-group AUC trade-off ``theta``.

>>> import numpy as np
>>> from fairops.scaff import SCAFFClassifier
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(300, 4)); s = rng.integers(0, 2, 300)
>>> y = (X[:, 0] + s > 0.5).astype(int)
>>> clf = SCAFFClassifier(n_estimators=20, theta=0.3).fit(X, y, sensitive_features=s)
>>> clf.classes_.tolist()
[0, 1]
"""

from ._forest import SCAFFClassifier
from ._path import ScaffPath, ScaffPathPoint, scaff_path
from ._tree_classifier import SCAFFTreeClassifier

__all__ = ["SCAFFClassifier", "SCAFFTreeClassifier", "ScaffPath", "ScaffPathPoint", "scaff_path"]
