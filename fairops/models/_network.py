"""The feed-forward network of the Fairband paper's search space, as scikit-learn can train it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from sklearn.base import BaseEstimator, ClassifierMixin

from ..errors import InputError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .._typing import ArrayLike, FloatArray, NDArray, RandomState


class WeightDecayMLP(ClassifierMixin, BaseEstimator):
    """scikit-learn's ``MLPClassifier`` (Adam) with PyTorch-style weight decay.

    PyTorch's Adam adds ``weight_decay * w`` to the gradient of the mean loss of a batch;
    scikit-learn adds ``alpha * w / rows in the batch``. The two agree when
    ``alpha = weight_decay * rows per batch``, which :meth:`fit` sets (``batch_size`` rows, or all
    rows when there are fewer). Biases are not decayed (PyTorch's optimiser decays them too). Every
    one of ``max_epochs`` epochs is run (scikit-learn's stop after 10 epochs without improvement is
    switched off).

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(100,)
        Units per hidden layer.
    weight_decay : float, default=0.0
        PyTorch's ``weight_decay``, >= 0.
    batch_size : int, default=2048
        Rows per batch.
    max_epochs : int, default=50
        Epochs trained, all of them.
    learning_rate : float, default=1e-3
        Adam's learning rate.
    beta_1, beta_2 : float, default=0.9, 0.999
        Adam's moment decays.
    random_state : int, RandomState or None, default=None
        Seeds the weights and the batches.

    Attributes
    ----------
    network_ : MLPClassifier
        The fitted network.
    classes_ : ndarray
        The classes.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(200, 3)); y = (X[:, 0] > 0).astype(int)
    >>> model = WeightDecayMLP((8,), weight_decay=0.01, batch_size=64, max_epochs=5).fit(X, y)
    >>> model.network_.alpha, model.predict_proba(X[:2]).shape
    (0.64, (2, 2))
    """

    def __init__(self, hidden_layer_sizes: tuple[int, ...] = (100,), *, weight_decay: float = 0.0,
                 batch_size: int = 2048, max_epochs: int = 50, learning_rate: float = 1e-3, beta_1: float = 0.9,
                 beta_2: float = 0.999, random_state: RandomState = None) -> None:
        self.hidden_layer_sizes = hidden_layer_sizes
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.learning_rate = learning_rate
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.random_state = random_state

    def fit(self, X: np.ndarray | pd.DataFrame, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Train the network for ``max_epochs`` epochs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features.
        y : array-like of shape (n_samples,)
            Classes.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Row weights.

        Returns
        -------
        self
            The fitted model.
        """
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        if not self.weight_decay >= 0:
            raise InputError(f"weight_decay must be >= 0, got {self.weight_decay!r}")
        rows_per_batch = min(int(self.batch_size), X.shape[0])
        self.network_ = MLPClassifier(
            hidden_layer_sizes=tuple(self.hidden_layer_sizes), solver="adam",
            alpha=self.weight_decay * rows_per_batch, batch_size=rows_per_batch,
            learning_rate_init=self.learning_rate, max_iter=self.max_epochs, beta_1=self.beta_1,
            beta_2=self.beta_2, random_state=self.random_state,
            n_iter_no_change=self.max_epochs)  # train every epoch, as the paper's fixed epoch count does
        with warnings.catch_warnings():
            # a fixed number of epochs, as in the paper: stopping before convergence is the setting
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.network_.fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.network_.classes_
        return self

    def predict_proba(self, X: ArrayLike) -> FloatArray:
        """The network's class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Probabilities, columns in ``classes_`` order.
        """
        return self.network_.predict_proba(X)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The network's predicted classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted classes.
        """
        return self.network_.predict(X)
