"""The static difficulty predictor: fitting, predicting, cross-validation."""

from __future__ import annotations

import dataclasses
import pickle
import random

import pytest

from taskmint.calibrate.predictor import (
    DifficultyPredictor,
    PredictorError,
    cross_validate,
    fit_predictor,
)
from taskmint.records import Features


def _features(lines: int, complexity: int, fail_to_pass: int | None = None) -> Features:
    """Features that vary in lines and complexity only (the rest is the same for every task)."""
    return Features(
        lines_removed=lines,
        units=1,
        files=1,
        complexity=complexity,
        callers=0,
        has_docstring=False,
        fail_to_pass=fail_to_pass,
    )


def _tasks(published_tasks, n: int = 120, seed: int = 0):
    """Tasks with synthetic features whose band follows lines and complexity, plus noise."""
    rng = random.Random(seed)
    base = published_tasks[0]
    tasks, labels = [], []
    for i in range(n):
        lines = rng.randint(2, 40)
        complexity = rng.randint(1, 12)
        score = lines / 40 + complexity / 12 + rng.gauss(0, 0.15)
        label = "easy" if score < 0.7 else "hard" if score < 1.3 else "frontier"
        lang = rng.choice(["python", "javascript"])
        features = _features(lines, complexity, rng.randint(1, 5))
        tasks.append(
            dataclasses.replace(base, instance_id=f"t{i}", features=features, language=lang)
        )
        labels.append(label)
    return tasks, labels


def test_the_predictor_learns_a_band_from_static_features(published_tasks) -> None:
    tasks, labels = _tasks(published_tasks)
    cv = cross_validate(tasks, labels, folds=5)
    assert cv.tasks == 120 and cv.folds == 5 and len(cv.per_fold) == 5
    assert cv.accuracy >= 0.75
    assert cv.accuracy > cv.baseline_accuracy + 0.2
    model = fit_predictor(tasks, labels)
    assert set(model.classes) == {"easy", "hard", "frontier"}
    assert "language=javascript" in model.feature_names and "f:complexity" in model.feature_names
    easy = dataclasses.replace(tasks[0], features=_features(2, 1))
    hard = dataclasses.replace(tasks[0], features=_features(40, 12))
    assert model.predict([easy, hard]) == ["easy", "frontier"]
    probs = model.probabilities([easy])[0]
    assert sum(probs.values()) == pytest.approx(1.0)
    again = pickle.loads(pickle.dumps(model))
    assert isinstance(again, DifficultyPredictor) and again.predict([hard]) == ["frontier"]


def test_the_predictor_refuses_what_it_cannot_fit(published_tasks) -> None:
    tasks, labels = _tasks(published_tasks, n=4)
    with pytest.raises(PredictorError, match="labels"):
        fit_predictor(tasks, labels[:3])
    with pytest.raises(PredictorError, match="at least 2"):
        cross_validate(tasks[:1], labels[:1])
    assert fit_predictor(tasks, labels).predict([]) == []


def test_real_tasks_features_feed_the_predictor(published_tasks) -> None:
    labels = ["easy" if i % 2 else "hard" for i in range(len(published_tasks))]
    model = fit_predictor(published_tasks, labels)
    assert "f:fail_to_pass" in model.feature_names
    assert set(model.predict(published_tasks)) <= {"easy", "hard"}
