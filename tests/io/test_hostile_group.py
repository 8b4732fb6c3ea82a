"""Crafted group models (GRLSI, GNMF) are refused on load in one line: classes repeated or unsorted,
topic groups that disagree with the columns the classes own (``topics`` and ``transform`` would read
different topics), negative topics in a non-negative model; a class-count mismatch is named as such; a
component whose class does not suit its name (a vectorizer as ``model``)."""

import json
import re
import warnings

import numpy as np
import pytest

from conftest import planted_corpus
from forge import reseal
from rlsi import io
from rlsi.errors import ModelFormatError
from rlsi.models.group import GroupNMF, GroupRLSI


X = planted_corpus(n_docs=60, n_terms=40, n_topics=3, seed=2)
Y = np.arange(60) % 3


@pytest.fixture(scope="module")
def fitted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"grlsi": GroupRLSI(2, 2, lambda1=0.3, max_iter=3, random_state=0).fit(X, Y),
                "gnmf": GroupNMF(2, 2, max_iter=3, random_state=0).fit(X, Y)}


@pytest.fixture(scope="module")
def saved(fitted, tmp_path_factory):
    root = tmp_path_factory.mktemp("groups")
    for name, model in fitted.items():
        io.save(root / name, model=model)
    return root


def _craft(saved, tmp_path, name, change):
    import shutil

    path = tmp_path / name
    shutil.copytree(saved / name, path)
    manifest = json.loads((path / "manifest.json").read_text())
    change(path, manifest["components"]["model"])
    (path / "manifest.json").write_text(json.dumps(manifest))
    return reseal(path)  # a crafted folder with matching checksums: the check under test must refuse it


def _set_array(path, comp, key, arr):
    entry = comp["arrays"][key]
    np.save(path / entry["file"], arr)
    entry.update(dtype=str(arr.dtype), shape=list(arr.shape))


def _groups_swapped(path, comp):
    groups = comp["meta"]["fitted"]["topic_groups_"]
    names = [k for k in groups if k != "shared"]
    groups[names[0]], groups[names[1]] = groups[names[1]], groups[names[0]]


def _classes(values):
    def change(path, comp):
        _set_array(path, comp, "classes_", np.asarray(values, dtype=np.int64))
    return change


def _counts_short(path, comp):
    _set_array(path, comp, "class_topics_", np.asarray([2, 2], dtype=np.int64))


def _negative(path, comp):
    entry = comp["arrays"]["components_"]
    if entry.get("kind") == "csr":
        f = path / entry["parts"]["data"]["file"]
    else:
        f = path / entry["file"]
    data = np.load(f)
    data.reshape(-1)[0] = -abs(data.reshape(-1)).max() - 1
    np.save(f, data)


CASES = {
    "topic groups disagree": ("grlsi", _groups_swapped, "topic_groups_"),
    "repeated classes": ("grlsi", _classes([0, 0, 2]), "classes_ repeats a class"),
    "unsorted classes": ("grlsi", _classes([2, 1, 0]), "classes_ is not sorted"),
    "class counts short": ("grlsi", _counts_short, "3 classes but 2 class topic counts"),
    "negative GNMF": ("gnmf", _negative, "negative topic weights"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_crafted_group_models_are_refused(saved, tmp_path, case):
    name, change, words = CASES[case]
    path = _craft(saved, tmp_path, name, change)
    with pytest.raises(ModelFormatError, match=re.escape(words)) as err:
        io.load(path)
    assert "\n" not in str(err.value)


def test_the_intact_group_models_load(saved, fitted):
    """The models the damage cases start from load as they were saved: the same topics, classes, groups
    and parameters, and the same vectors and predictions."""
    for name, model in fitted.items():
        loaded = io.load(saved / name)["model"]
        assert type(loaded) is type(model) and loaded.get_params() == model.get_params()
        a, b = loaded.components_, model.components_
        assert hasattr(a, "toarray") == hasattr(b, "toarray")  # sparse topics stay sparse, dense stay dense
        np.testing.assert_array_equal(a.toarray() if hasattr(a, "toarray") else a,
                                      b.toarray() if hasattr(b, "toarray") else b)
        np.testing.assert_array_equal(loaded.classes_, model.classes_)
        np.testing.assert_array_equal(loaded.class_topics_, model.class_topics_)
        np.testing.assert_array_equal(loaded.objective_, model.objective_)
        assert loaded.topic_groups == model.topic_groups and loaded.n_iter_ == model.n_iter_
        np.testing.assert_array_equal(loaded.transform(X, Y), model.transform(X, Y))
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("name, cls, words", [("model", "TfidfVectorizer", "not a topic model"),
                                               ("vectorizer", "BatchRLSI", "must be a StreamingTfidf or "
                                                                           "TfidfVectorizer")])
def test_a_component_of_another_class_is_refused(saved, tmp_path, name, cls, words):
    import shutil

    path = tmp_path / "m"
    shutil.copytree(saved / "grlsi", path)
    manifest = json.loads((path / "manifest.json").read_text())
    comps = manifest["components"]
    if name == "vectorizer":
        comps["vectorizer"] = dict(comps["model"])
    comps[name] = dict(comps[name], **{"class": cls})
    (path / "manifest.json").write_text(json.dumps(manifest))
    reseal(path)
    with pytest.raises(ModelFormatError, match=re.escape(words)):
        io.load(path)
