"""scikit-learn estimators: switchyard.Classifier and switchyard.Regressor.

    import switchyard
    model = switchyard.Classifier(random_state=0).fit(X_train, y_train)   # arrays or DataFrames
    model.predict(X_test), model.predict_proba(X_test), model.score(X_test, y_test)

They follow scikit-learn's estimator protocol (fit, predict, score, get_params / set_params,
clone, pickle) and so work in Pipeline, cross_val_score and GridSearchCV. Each fit is one
switchyard training run: the rows are written to a private CSV file in a temporary folder (a
header with the feature names, then the target), trained with `switchyard.run` from a
configuration the estimator builds from its parameters, and the trained checkpoint is kept in
memory (`checkpoint_`, bytes) and loaded into a `switchyard.Predictor`. The folder is removed
before fit returns; pickling keeps the checkpoint's bytes.

The defaults are chosen to train a good model on a small table without tuning: features
standardised, a multi-layer perceptron with one hidden layer of 64 ReLUs, adam at a learning
rate of 0.001 with a little weight decay, batches of 32, up to 200 epochs with early stopping
on 10% of the rows held out for validation (the model keeps the best epoch's weights).

What the training run does with the rows given to fit:
- 10% of them (validation_fraction) judge each epoch and are not trained on, as in
  scikit-learn's MLP with early_stopping=True;
- one more row is held out as the run's test split: switchyard's training run always keeps one
  (data.test_fraction must be above 0), and the estimator makes it the smallest it can be.

Progress goes to the "switchyard" logger: one line per epoch (DEBUG, or INFO with verbose=True)
and one line at the end. With verbose=True and no logging configured, the lines go to stderr.
verbose=2 draws a progress bar on stderr instead of the epoch lines (which stay at DEBUG).

scikit-learn's estimator checks (sklearn.utils.estimator_checks) that apply pass; XFAIL_CHECKS
and NOT_APPLICABLE below name the others, each with the reason. tests/python/test_estimators.py
runs them.
"""

import csv
import io
import logging
import math
import numbers
import os
import sys
import tempfile
import time

import numpy
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from . import Predictor, run

logger = logging.getLogger("switchyard")

__all__ = ["Classifier", "Regressor"]

# scikit-learn's estimator checks (sklearn.utils.estimator_checks, 1.2) that do not apply, and
# why. check_estimator(est) yields the others, and they pass; tests/python/test_estimators.py runs
# them and checks that this list and sklearn's checks add up.
#
# Run, and expected to fail (the `_xfail_checks` tag: check_estimator skips it with the reason):
XFAIL_CHECKS = {
    "check_dataframe_column_names_consistency":
        "a DataFrame is read by column name, as switchyard reads a CSV file by its header: the "
        "columns fit saw may come in another order, and other columns may be there besides. A "
        "missing column is refused with scikit-learn's message, but the check also expects "
        "reordered columns to be refused",
}
# Not run: they test what these estimators do not have or are not.
NOT_APPLICABLE = {
    **dict.fromkeys(
        ["check_sample_weights_invariance", "check_sample_weights_list",
         "check_sample_weights_not_an_array", "check_sample_weights_not_overwritten",
         "check_sample_weights_pandas_series", "check_sample_weights_shape"],
        "fit takes no sample_weight: a switchyard training run has no per-row weights"),
    **dict.fromkeys(
        ["check_class_weight_balanced_classifiers", "check_class_weight_classifiers",
         "check_class_weight_balanced_linear_classifier"],
        "no class_weight parameter: switchyard's cross-entropy has no class weights"),
    **dict.fromkeys(
        ["check_classifier_multioutput",
         "check_classifiers_multilabel_output_format_decision_function",
         "check_classifiers_multilabel_output_format_predict",
         "check_classifiers_multilabel_output_format_predict_proba",
         "check_classifiers_multilabel_representation_invariance"],
        "Classifier predicts one label column (multi-class, not multi-label or multi-output)"),
    "check_param_validation":
        "checks scikit-learn's private _parameter_constraints, which only its own estimators "
        "declare; these validate their parameters in fit (ValueError) and in the training run",
    "check_fit_non_negative": "for estimators tagged requires_positive_X",
    "check_nonsquare_error": "for pairwise estimators (precomputed kernels or distances)",
    "check_sparsify_coefficients": "for linear models with coef_ and sparsify()",
    **dict.fromkeys(
        ["check_clustering", "check_clusterer_compute_labels_predict"], "for clusterers"),
    **dict.fromkeys(
        ["check_outlier_contamination", "check_outlier_corruption", "check_outliers_fit_predict",
         "check_outliers_train"], "for outlier detectors"),
    **dict.fromkeys(
        ["check_transformer_data_not_an_array", "check_transformer_general",
         "check_transformer_get_feature_names_out",
         "check_transformer_get_feature_names_out_pandas", "check_transformer_n_iter",
         "check_transformer_preserve_dtypes", "check_transformers_unfitted",
         "check_get_feature_names_out_error", "check_set_output_transform",
         "check_set_output_transform_pandas", "check_global_ouptut_transform_pandas"],
        "for transformers"),
    **dict.fromkeys(
        ["check_classifiers_predictions", "check_estimators_data_not_an_array"],
        "helpers that other checks run (check_classifiers_train, check_*_data_not_an_array)"),
    "check_estimator": "the driver that yields the checks",
}
# Run besides those check_estimator yields: they apply, but scikit-learn 1.2 runs them only on its
# own estimators.
EXTRA_CHECKS = ["check_n_features_in_after_fitting", "check_dataframe_column_names_consistency"]


class _Estimator(BaseEstimator):
    """What Classifier and Regressor share: the parameters, the training run and prediction."""

    _task = None  # "classification" or "regression"

    # --- fit --------------------------------------------------------------------------------

    def _fit(self, X, y):
        # A fit that fails leaves the estimator unfitted, not half of one model and half another.
        self.__dict__.pop("checkpoint_", None)
        self._predictor = None
        _check_numeric_columns(X)
        X, y = self._validate_data(X, y, dtype=[numpy.float64, numpy.float32],
                                   multi_output=self._task == "regression",
                                   y_numeric=self._task == "regression")
        self._check_parameters()
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 samples to train, got "
                             f"n_samples = {n}")
        targets, outputs = self._targets(y)
        seed = self._seed()
        names = _feature_columns(getattr(self, "feature_names_in_", None), X.shape[1])
        target_names = _target_columns(names, outputs if targets.ndim == 2 else 1)
        start = time.perf_counter()
        with _verbose_logging(self.verbose), \
                tempfile.TemporaryDirectory(prefix="switchyard-fit-") as folder:
            validation = self._validation_fraction(n)
            config = self._config(n, outputs, seed, target_names, validation)
            data = os.path.join(folder, "train.csv")
            _write_csv(data, X, targets, names, target_names)
            config["data"]["dataset"] = data
            config["train"]["checkpoint"] = os.path.join(folder, "last.ckpt")
            config["train"]["best_checkpoint"] = os.path.join(folder, "best.ckpt")
            progress = self._progress_logger()
            try:
                metrics = run(config, overrides=self.overrides, progress=progress)
            finally:
                getattr(progress, "close", lambda: None)()
            trained = _trained_checkpoint(metrics, folder)
            with open(trained, "rb") as checkpoint:
                self.checkpoint_ = checkpoint.read()
            self._predictor = Predictor(trained, device=self.device)
            self._check_classes()
            # The run's test split is one row of the training data: its figures say nothing.
            self.history_ = [{k: v for k, v in epoch.items() if not k.startswith("test_")}
                             for epoch in metrics.get("history", [])]
            self.n_iter_ = int(metrics["epochs"])
            self.best_epoch_ = int(metrics.get("monitor", {}).get("best_epoch") or self.n_iter_)
            self.device_ = metrics.get("device", self._predictor.device)
            self._log_summary(metrics, validation, time.perf_counter() - start)
        return self

    def _check_classes(self):
        """Classifier: the trained model's classes are the ones written."""

    def _check_parameters(self):
        if not (isinstance(self.max_epochs, numbers.Integral) and self.max_epochs >= 1):
            raise ValueError(f"max_epochs must be an integer >= 1, got {self.max_epochs!r}")
        if not (isinstance(self.patience, numbers.Integral) and self.patience >= 1):
            raise ValueError(f"patience must be an integer >= 1, got {self.patience!r}")
        if not (0.0 < self.validation_fraction < 1.0):
            raise ValueError("validation_fraction must be between 0 and 1 (exclusive), got "
                             f"{self.validation_fraction!r}")
        if self.layers is None and any(not isinstance(w, numbers.Integral) or w < 1
                                       for w in self.hidden_layer_sizes):
            raise ValueError("hidden_layer_sizes must be integers >= 1, got "
                             f"{self.hidden_layer_sizes!r}")

    def _seed(self):
        """random_state as the run's seed: an int as it is, None or a RandomState drawn from."""
        if isinstance(self.random_state, numbers.Integral) and self.random_state >= 0:
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(0, 2**31 - 1))

    def _validation_fraction(self, n):
        """The validation share of the rows left after the one test row, or None when early
        stopping is off or would leave fewer than 2 rows to train on."""
        if not self.early_stopping:
            return None
        rest = n - 1
        if rest - math.ceil(self.validation_fraction * rest) < 2:
            logger.info("%s: %d rows are too few for a validation split; early stopping "
                        "watches the training loss", type(self).__name__, n)
            return None
        return float(self.validation_fraction)

    def _config(self, n, outputs, seed, target_names, validation):
        data = {"header": True, "delimiter": "comma", "scale": self.scale,
                # One row: the least a training run's test split may hold.
                "test_fraction": 0.5 / n, "split_seed": seed}
        if self._task == "regression":
            data["targets"] = target_names
            data["target_scale"] = self.target_scale
        else:
            data["target"] = target_names[0]
            data["label_order"] = "sorted"
        if validation is not None:
            data["validation_fraction"] = validation
        early = {"metric": "val_loss" if validation is not None else "train_loss",
                 "patience": int(self.patience), "min_delta": float(self.tol),
                 "restore_best_weights": True}
        return {
            "seed": seed,
            "device": self.device,
            "data": data,
            "model": {"layers": self._layers(outputs)},
            "loss": self._loss(),
            "optimizer": {"type": self.optimizer, "lr": float(self.learning_rate),
                          "weight_decay": float(self.weight_decay)},
            "train": {"epochs": int(self.max_epochs), "batch_size": self.batch_size,
                      "progress": "none", "checkpoint_every": int(self.max_epochs),
                      "early_stopping": early},
        }

    def _layers(self, outputs):
        if self.layers is not None:
            return [dict(layer) for layer in self.layers]
        layers = []
        for width in self.hidden_layer_sizes:
            layers.append({"type": "linear", "out_features": int(width)})
            layers.append({"type": self.activation})
        layers.append({"type": "linear", "out_features": int(outputs)})
        return layers

    def _progress_logger(self):
        bar = self.verbose >= 2
        level = logging.INFO if self.verbose and not bar else logging.DEBUG
        if not logger.isEnabledFor(level) and not bar:
            return None
        name, epochs = type(self).__name__, self.max_epochs
        drawn = _ProgressBar(name, epochs, sys.stderr) if bar else None

        def progress(epoch):
            figures = [f"train_loss {epoch['train_loss']:.4g}"]
            if "train_accuracy" in epoch:
                figures.append(f"train_accuracy {epoch['train_accuracy']:.4f}")
            logger.log(level, "%s: epoch %d/%d: %s, lr %.3g (%.1f ms)", name, epoch["epoch"],
                       epochs, ", ".join(figures), epoch["learning_rate"],
                       1000.0 * epoch["epoch_seconds"])
            if drawn is not None:
                drawn.update(epoch["epoch"], figures[0])
            return True

        if drawn is not None:
            progress.close = drawn.close
        return progress

    def _log_summary(self, metrics, validation, seconds):
        level = logging.INFO if self.verbose else logging.DEBUG
        if not logger.isEnabledFor(level):
            return
        monitor = metrics.get("monitor", {})
        how = monitor.get("message") or f"{self.n_iter_} epochs"
        if validation is not None and self.history_:
            best = self.history_[min(self.best_epoch_, len(self.history_)) - 1]
            figure = "val_loss %.4g" % best["val_loss"]
            if "val_accuracy" in best:
                figure += ", val_accuracy %.4f" % best["val_accuracy"]
            if "val_r2" in best:
                figure += ", val_r2 %.4f" % best["val_r2"]
        else:
            figure = "train_loss %.4g" % monitor.get("best_value", metrics.get("train_loss"))
        logger.log(level, "%s: trained on %s in %.2f s: %s; keeps epoch %d (%s)",
                   type(self).__name__, self.device_, seconds, how, self.best_epoch_, figure)

    # --- predict ----------------------------------------------------------------------------

    def _predictions(self, X):
        """The model's outputs for X: probabilities (classes) or values (regression), float64."""
        check_is_fitted(self, "checkpoint_")
        X = _by_name(self, X)
        _check_numeric_columns(X)
        X = self._validate_data(X, dtype=[numpy.float64, numpy.float32],
                                reset=False)
        return numpy.asarray(self._loaded().predict(X), dtype=numpy.float64)

    def _loaded(self):
        if getattr(self, "_predictor", None) is None:
            with tempfile.TemporaryDirectory(prefix="switchyard-load-") as folder:
                path = os.path.join(folder, "model.ckpt")
                with open(path, "wb") as checkpoint:
                    checkpoint.write(self.checkpoint_)
                self._predictor = Predictor(path, device=self.device)
        return self._predictor

    def save_checkpoint(self, path):
        """Writes the trained checkpoint to `path`, for `switchyard predict` and Predictor."""
        check_is_fitted(self, "checkpoint_")
        with open(path, "wb") as checkpoint:
            checkpoint.write(self.checkpoint_)

    # --- pickle: the checkpoint's bytes travel, the device-bound predictor is loaded again ---

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_predictor", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._predictor = None

    def _more_tags(self):
        return {"_xfail_checks": dict(XFAIL_CHECKS)}


class Classifier(ClassifierMixin, _Estimator):
    """A switchyard neural network classifier with scikit-learn's interface.

    Parameters (stored as given; each maps onto a key of the training run's YAML, docs/config.md):

    hidden_layer_sizes : tuple of int, default (64,)
        The widths of the hidden linear layers, each followed by `activation` (model.layers).
    activation : {"relu", "gelu", "tanh", "sigmoid"}, default "relu"
    layers : list of dict, default None
        The whole model.layers list instead (the last layer must output one value per class).
    optimizer : {"adam", "adamw", "sgd"}, default "adam"
    learning_rate : float, default 0.001 (optimizer.lr)
    weight_decay : float, default 1e-4 (optimizer.weight_decay)
    batch_size : int or "auto", default 32 (train.batch_size)
    max_epochs : int, default 200 (train.epochs)
    early_stopping : bool, default True
        True: validation_fraction of the rows judge each epoch (val_loss); training stops after
        `patience` epochs without an improvement of `tol` and keeps the best epoch's weights.
        False (or too few rows for a validation split): the same on the training loss.
    validation_fraction : float, default 0.1 (data.validation_fraction)
    patience : int, default 10 (train.early_stopping.patience)
    tol : float, default 1e-4 (train.early_stopping.min_delta)
    scale : {"standard", "minmax", "none"}, default "standard" (data.scale)
    random_state : int, RandomState or None, default None
        The seed of initialisation, shuffling and the validation split (seed, data.split_seed).
    device : str, default "auto"
        "auto", "cpu", a backend or a device id, for training and prediction (device).
    overrides : dict, default None
        Other keys of the run, dotted as in `switchyard run --set` ({"schedule.type": "cosine"}).
    verbose : bool or int, default False
        Log each epoch at INFO instead of DEBUG on the "switchyard" logger; 2: a progress bar on
        stderr instead, redrawn each epoch (the epoch lines stay at DEBUG).

    Attributes after fit: classes_ (sorted, as scikit-learn orders them), n_features_in_,
    feature_names_in_ (fitted on a DataFrame with string column names), n_iter_ (epochs run),
    best_epoch_ (whose weights the model has), history_ (per-epoch figures, a list of dicts),
    device_ (where it trained), checkpoint_ (the trained checkpoint's bytes).

    A DataFrame given to predict is read by column name: the columns fit saw, in any order,
    other columns ignored, a missing one an error naming it.
    """

    _task = "classification"

    def __init__(self, hidden_layer_sizes=(64,), activation="relu", layers=None,
                 optimizer="adam", learning_rate=0.001, weight_decay=1e-4, batch_size=32,
                 max_epochs=200, early_stopping=True, validation_fraction=0.1, patience=10,
                 tol=1e-4, scale="standard", random_state=None, device="auto", overrides=None,
                 verbose=False):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.layers = layers
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.tol = tol
        self.scale = scale
        self.random_state = random_state
        self.device = device
        self.overrides = overrides
        self.verbose = verbose

    def fit(self, X, y):
        """Trains on X (samples x features: an array or a DataFrame) and labels y (any values
        numpy can sort: strings, integers, ...). Returns self."""
        return self._fit(X, y)

    def _targets(self, y):
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        self.classes_, index = numpy.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"Classifier needs samples of at least 2 classes, got 1 class "
                             f"({self.classes_[0]!r})")
        # Class names in the checkpoint when switchyard numbers them as scikit-learn does
        # (sorted strings); else class numbers 0..k-1, mapped back through classes_.
        if _names_keep_their_order(self.classes_):
            return self.classes_[index].astype(str), len(self.classes_)
        return index, len(self.classes_)

    def _loss(self):
        return "cross_entropy"

    def _check_classes(self):
        """The checkpoint's classes are classes_ (names) or 0..k-1 (numbers), in that order."""
        written = ([str(c) for c in self.classes_] if _names_keep_their_order(self.classes_)
                   else [str(i) for i in range(len(self.classes_))])
        if self._predictor.class_names != written:
            raise RuntimeError(f"the trained model's classes {self._predictor.class_names} are "
                               f"not the ones written for training, {written}")

    def predict_proba(self, X):
        """Class probabilities, samples x classes (in the order of classes_)."""
        probabilities = self._predictions(X)
        return probabilities / probabilities.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        with numpy.errstate(divide="ignore"):
            return numpy.log(self.predict_proba(X))

    def predict(self, X):
        """The most probable class of each row, as one of classes_."""
        probabilities = self._predictions(X)
        return self.classes_[numpy.argmax(probabilities, axis=1)]


class Regressor(MultiOutputMixin, RegressorMixin, _Estimator):
    """A switchyard neural network regressor with scikit-learn's interface.

    The parameters are the Classifier's (see there) and:

    loss : {"mse", "l1", "smooth_l1", "huber"}, default "mse" (loss)
    target_scale : {"standard", "minmax", "none"}, default "standard"
        How the targets are scaled while training (data.target_scale); predictions are in the
        targets' own units.

    y may have one column or several (one model output each); predict returns the same shape.
    """

    _task = "regression"

    def __init__(self, hidden_layer_sizes=(64,), activation="relu", layers=None,
                 optimizer="adam", learning_rate=0.001, weight_decay=1e-4, batch_size=32,
                 max_epochs=200, early_stopping=True, validation_fraction=0.1, patience=10,
                 tol=1e-4, scale="standard", loss="mse", target_scale="standard",
                 random_state=None, device="auto", overrides=None, verbose=False):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.layers = layers
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.tol = tol
        self.scale = scale
        self.loss = loss
        self.target_scale = target_scale
        self.random_state = random_state
        self.device = device
        self.overrides = overrides
        self.verbose = verbose

    def fit(self, X, y):
        """Trains on X (samples x features: an array or a DataFrame) and numeric targets y
        (samples, or samples x targets). Returns self."""
        return self._fit(X, y)

    def _targets(self, y):
        y = numpy.asarray(y, dtype=numpy.float64)
        self._y_2d = y.ndim == 2
        return y, (y.shape[1] if y.ndim == 2 else 1)

    def _loss(self):
        return self.loss

    def predict(self, X):
        """Predicted values in the targets' units: samples, or samples x targets when y had
        two dimensions at fit."""
        values = self._predictions(X)
        return values if self._y_2d else values[:, 0]


# --- helpers -------------------------------------------------------------------------------

_UNSAFE = set(',;\t"\'\r\n#')
# Words a CSV reader may take for a missing value: such labels are written as class numbers.
_MISSING_WORDS = {"na", "n/a", "nan", "null", "none", "?", "-"}


def _safe_name(name):
    return (isinstance(name, str) and name != "" and name == name.strip()
            and not (set(name) & _UNSAFE))


def _feature_columns(feature_names, count):
    """The CSV header's feature names: the DataFrame's, or x0, x1, ... when there are none or
    one could not be written as a plain CSV field."""
    if feature_names is not None:
        names = [str(n) for n in feature_names]
        if all(_safe_name(n) for n in names) and len(set(names)) == len(names):
            return names
    return [f"x{i}" for i in range(count)]


def _target_columns(features, count):
    taken = set(features)
    base = "target"
    while base in taken:
        base = "_" + base
    return [base] if count == 1 else [f"{base}{i}" for i in range(count)]


def _names_keep_their_order(classes):
    """Whether switchyard reads these labels as names numbered in classes_' order: strings that
    a CSV field keeps as they are, none a word that could mean a missing value, not all of them
    numbers (those would be class numbers)."""
    if not all(_safe_name(c) and c.lower() not in _MISSING_WORDS for c in classes):
        return False

    def is_number(text):
        try:
            float(text)
            return True
        except ValueError:
            return False

    # switchyard sorts names by their bytes (UTF-8), numpy by code points: the same order.
    return not all(is_number(c) for c in classes)


def _check_numeric_columns(X):
    """A DataFrame's columns must hold numbers: one that does not is named."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        return
    text = [str(name) for name, dtype in dtypes.items()
            if getattr(dtype, "kind", "O") not in "biuf"]
    if text:
        raise ValueError(f"column(s) {', '.join(repr(n) for n in text)} do not hold numbers: "
                         "encode them first (e.g. sklearn.preprocessing.OneHotEncoder in a "
                         "ColumnTransformer before the estimator)")


def _write_csv(path, X, targets, names, target_names):
    body = io.StringIO()
    columns = numpy.column_stack([X, targets]) if targets.dtype.kind == "f" else X
    numpy.savetxt(body, columns, delimiter=",", fmt="%.17g")
    with open(path, "w", encoding="utf-8", newline="") as out:
        csv.writer(out, lineterminator="\n").writerow(list(names) + list(target_names))
        if targets.dtype.kind == "f":
            out.write(body.getvalue())
        else:
            for line, label in zip(body.getvalue().splitlines(), targets):
                out.write(f"{line},{label}\n")


def _trained_checkpoint(metrics, folder):
    """The checkpoint with the weights the run ended with: the best epoch's (early stopping
    restored them), else the last one."""
    monitor = metrics.get("monitor", {})
    best = monitor.get("best_checkpoint")
    if best and monitor.get("best_checkpoint_epoch") == monitor.get("final_weights_epoch"):
        return best
    return metrics.get("checkpoint") or os.path.join(folder, "last.ckpt")


def _by_name(estimator, X):
    """A DataFrame's feature columns, by name, in fit's order; anything else as it is."""
    expected = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    if expected is None or columns is None or not hasattr(X, "loc"):
        return X
    present = set(columns)
    missing = sorted(str(name) for name in expected if name not in present)
    if missing:
        unseen = sorted(str(c) for c in columns if c not in set(expected))
        message = "The feature names should match those that were passed during fit.\n"
        if unseen:
            message += "Feature names unseen at fit time:\n" + "".join(
                f"- {name}\n" for name in unseen)
        message += "Feature names seen at fit time, yet now missing:\n" + "".join(
            f"- {name}\n" for name in missing)
        raise ValueError(message)
    return X.loc[:, list(expected)]


class _ProgressBar:
    """One line on `stream`, redrawn after each epoch: how far through max_epochs the run is
    (an early stop ends it sooner), the training loss and the time so far."""

    WIDTH = 30

    def __init__(self, name, epochs, stream):
        self.name, self.epochs, self.stream = name, max(int(epochs), 1), stream
        self.start = time.perf_counter()
        self.drawn = False

    def update(self, epoch, figure):
        filled = min(self.WIDTH, self.WIDTH * epoch // self.epochs)
        self.stream.write(f"\r{self.name} [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
                          f"epoch {epoch}/{self.epochs}, {figure}, "
                          f"{time.perf_counter() - self.start:.1f} s")
        self.stream.flush()
        self.drawn = True

    def close(self):
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


class _verbose_logging:
    """With verbose and no handler anywhere for the "switchyard" logger, one on stderr while
    fit runs, so that verbose=True shows something without configuring logging."""

    def __init__(self, verbose):
        self.handler = None
        if verbose and not logger.hasHandlers():
            self.handler = logging.StreamHandler()
            self.handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def __enter__(self):
        if self.handler is not None:
            logger.addHandler(self.handler)
            self.previous_level = logger.level
            if logger.getEffectiveLevel() > logging.INFO:
                logger.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc):
        if self.handler is not None:
            logger.removeHandler(self.handler)
            logger.setLevel(self.previous_level)
        return False
