"""A static difficulty predictor: a task's band guessed from features known before any rollout.

Fitted on calibrated tasks (features from `Task.features` - lines removed, units, files,
callers, complexity, FAIL_TO_PASS count, ... - plus one-hot strategy and language), it lets a
request for a harder batch pre-filter candidates before spending rollouts on them. The model is
a multinomial logistic regression with L2 regularization, fitted by gradient descent in numpy;
`cross_validate` reports k-fold accuracy next to the majority-class baseline, which is the figure
to check before trusting it.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from taskmint.errors import TaskmintError
from taskmint.records import Task

__all__ = ["CrossValidation", "DifficultyPredictor", "cross_validate", "fit_predictor"]


class PredictorError(TaskmintError, ValueError):
    """The predictor cannot be fitted on the given tasks."""


def _raw(task: Task) -> dict[str, float]:
    pairs = task.features.as_pairs() if task.features is not None else ()
    row = {f"f:{k}": v for k, v in pairs}
    row[f"strategy={task.strategy}"] = 1.0
    row[f"language={task.language}"] = 1.0
    # a level-2 statement (behaviour only) makes the same edit harder than a level-1 one
    row["statement_level"] = float(getattr(task, "statement_level", 1))
    return row


@dataclass(frozen=True, slots=True, kw_only=True)
class DifficultyPredictor:
    """A fitted predictor; plain tuples, so it pickles and serializes like a record."""

    feature_names: tuple[str, ...]
    classes: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[tuple[float, ...], ...]  # per class: one weight per feature, then the bias

    def _matrix(self, tasks: Sequence[Task]) -> np.ndarray:
        rows = [_raw(t) for t in tasks]
        x = np.array([[r.get(n, 0.0) for n in self.feature_names] for r in rows], dtype=float)
        x = (x - np.array(self.mean)) / np.array(self.scale)
        return np.hstack([x, np.ones((len(rows), 1))])

    def probabilities(self, tasks: Sequence[Task]) -> list[dict[str, float]]:
        """Per task, the probability of each band."""
        if not tasks:
            return []
        p = _softmax(self._matrix(tasks) @ np.array(self.weights).T)
        return [dict(zip(self.classes, map(float, row), strict=True)) for row in p]

    def predict(self, tasks: Sequence[Task]) -> list[str]:
        """The likeliest band of each task."""
        return [max(p, key=p.__getitem__) for p in self.probabilities(tasks)]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_predictor(
    tasks: Sequence[Task], labels: Sequence[str], *, l2: float = 1.0, iterations: int = 800
) -> DifficultyPredictor:
    """Fit on tasks and their bands (e.g. `bands.overall_band` of each calibrated task)."""
    if len(tasks) != len(labels):
        raise PredictorError(f"{len(tasks)} tasks but {len(labels)} labels")
    if len(tasks) < 2 or len(set(labels)) < 1:
        raise PredictorError("need at least 2 calibrated tasks to fit a predictor")
    rows = [_raw(t) for t in tasks]
    names = tuple(sorted({k for r in rows for k in r}))
    classes = tuple(sorted(set(labels)))
    x = np.array([[r.get(n, 0.0) for n in names] for r in rows], dtype=float)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    xs = np.hstack([(x - mean) / scale, np.ones((len(rows), 1))])
    y = np.zeros((len(rows), len(classes)))
    y[np.arange(len(rows)), [classes.index(label) for label in labels]] = 1.0
    w = np.zeros((len(classes), xs.shape[1]))
    reg = np.full(xs.shape[1], l2 / len(rows))
    reg[-1] = 0.0  # the bias is not shrunk
    step = 0.5
    for _ in range(iterations):
        grad = (_softmax(xs @ w.T) - y).T @ xs / len(rows) + w * reg
        w -= step * grad
    return DifficultyPredictor(
        feature_names=names,
        classes=classes,
        mean=tuple(map(float, mean)),
        scale=tuple(map(float, scale)),
        weights=tuple(tuple(map(float, row)) for row in w),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossValidation:
    """k-fold accuracy of the predictor and of always guessing the most common band."""

    tasks: int
    folds: int
    accuracy: float
    baseline_accuracy: float
    per_fold: tuple[float, ...]


def cross_validate(
    tasks: Sequence[Task],
    labels: Sequence[str],
    *,
    folds: int = 5,
    seed: int = 0,
    l2: float = 1.0,
) -> CrossValidation:
    """Shuffled k-fold cross-validated accuracy (the baseline guesses each training fold's
    majority band)."""
    n = len(tasks)
    folds = min(folds, n)
    if folds < 2:
        raise PredictorError("need at least 2 tasks for cross-validation")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    hits = base_hits = 0
    per_fold = []
    for f in range(folds):
        test = order[f::folds]
        held = set(test)
        train = [i for i in order if i not in held]
        model = fit_predictor([tasks[i] for i in train], [labels[i] for i in train], l2=l2)
        guess = model.predict([tasks[i] for i in test])
        majority = Counter(labels[i] for i in train).most_common(1)[0][0]
        right = sum(g == labels[i] for g, i in zip(guess, test, strict=True))
        hits += right
        base_hits += sum(labels[i] == majority for i in test)
        per_fold.append(round(right / len(test), 4))
    return CrossValidation(
        tasks=n,
        folds=folds,
        accuracy=round(hits / n, 4),
        baseline_accuracy=round(base_hits / n, 4),
        per_fold=tuple(per_fold),
    )
