"""One test per case of a hostile model directory: each ends in one ModelFormatError line that
names the file (or the model) and the problem, before any numerical code runs."""

import json
import os
import pickle
import signal

import numpy as np
import pytest

from rlsi import io
from rlsi.cli.main import main
from rlsi.errors import ModelFormatError
from rlsi.models import BatchRLSI
from rlsi.text import TfidfVectorizer

from forge import reseal

DOCS = [
    "the heart pumps blood through arteries and veins",
    "blood pressure in arteries rises with heart disease",
    "cardiac surgery repairs the heart valves and arteries",
    "the lens of the eye focuses light on the retina",
    "cataract clouds the lens and blurs vision of the eye",
    "retina damage and vision loss in the eye",
    "bacteria infect cells and the immune system responds",
    "immune cells attack bacteria and viruses in infection",
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("pristine") / "model"
    vec = TfidfVectorizer()
    X = vec.fit_transform(DOCS)
    model = BatchRLSI(3, lambda1=0.5, random_state=0, max_iter=10).fit(X)
    io.save(path, model=model, vectorizer=vec)
    return path


@pytest.fixture
def model_dir(saved, tmp_path):
    import shutil

    path = tmp_path / "model"
    shutil.copytree(saved, path)
    return path


def _manifest(path):
    return json.loads((path / "manifest.json").read_text())


def _edit(path, fn):
    """Change the manifest, and record the checksums again (a crafted folder: the check under test must hold)."""
    m = _manifest(path)
    fn(m)
    (path / "manifest.json").write_text(json.dumps(m))
    reseal(path)


def _set(path, name, arr):
    np.save(path / name, arr, allow_pickle=False)
    reseal(path)


def _refused(path, *fragments):
    with pytest.raises(ModelFormatError) as info:
        io.load(path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg, msg
    for f in fragments:
        assert f in msg, msg
    return msg


@pytest.mark.parametrize("value", ["n_terms", 10**6, -7])
def test_out_of_range_column_index(model_dir, value, capsys):
    ind = np.load(model_dir / "model.components_.indices.npy")
    n_terms = _manifest(model_dir)["components"]["model"]["arrays"]["components_"]["shape"][1]
    ind[5] = n_terms if value == "n_terms" else value
    _set(model_dir, "model.components_.indices.npy", ind)
    _refused(model_dir, "column index", "model.components_")
    # the commands that crashed (SIGSEGV / double free) or printed wrong results now refuse in one line
    for argv in (["transform", model_dir, model_dir / "docs.jsonl"], ["topics", model_dir]):
        assert main(["-q", *map(str, argv)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("rlsi: error:") and "column index" in err and err.count("\n") == 1


def test_non_monotonic_indptr(model_dir):
    ptr = np.load(model_dir / "model.components_.indptr.npy")
    ptr[1], ptr[2] = ptr[2], ptr[1] - 1
    _set(model_dir, "model.components_.indptr.npy", ptr)
    _refused(model_dir, "row pointers")


@pytest.mark.parametrize("pattern", ["(a|aa)+$", "(?:x+x+)+y"])
def test_token_pattern_from_manifest_is_never_compiled(model_dir, pattern):
    _edit(model_dir, lambda m: m["components"]["vectorizer"]["meta"]["params"].update(token_pattern=pattern))
    _refused(model_dir, "not a registered token pattern", "register_token_pattern")


def test_default_token_pattern_of_existing_models_loads(model_dir):
    pattern = _manifest(model_dir)["components"]["vectorizer"]["meta"]["params"]["token_pattern"]
    assert pattern == r"[^\W_]+"  # what every saved model holds: accepted as the registered default
    assert io.load(model_dir)["vectorizer"].transform(DOCS).shape[0] == len(DOCS)


@pytest.mark.parametrize("file", ["../../other/model.objective_.npy", "ABSOLUTE", "sub/../x.npy"])
def test_file_entries_outside_the_folder(model_dir, file):
    outside = model_dir.parent.parent / "other"
    outside.mkdir(exist_ok=True)
    np.save(outside / "model.objective_.npy", np.zeros(3))
    file = str(outside / "model.objective_.npy") if file == "ABSOLUTE" else file
    _edit(model_dir, lambda m: m["components"]["model"]["arrays"]["objective_"].update(file=file))
    _refused(model_dir, "must be a file name inside the model folder")


def test_symlink_leading_outside(model_dir):
    outside = model_dir.parent / "elsewhere.npy"
    os.replace(model_dir / "model.objective_.npy", outside)
    os.symlink(outside, model_dir / "model.objective_.npy")
    _refused(model_dir, "outside the model folder")


@pytest.mark.parametrize("value", [np.nan, np.inf, 1e300])
def test_non_finite_or_huge_topic_weights(model_dir, value, capsys):
    data = np.load(model_dir / "model.components_.data.npy")
    data[0] = value
    _set(model_dir, "model.components_.data.npy", data)
    _refused(model_dir, "model.components_.data.npy")
    assert main(["-q", "transform", str(model_dir), str(model_dir / "x.jsonl")]) == 2  # not an all-NaN matrix
    assert "rlsi: error:" in capsys.readouterr().err


@pytest.mark.parametrize("dtype, message", [("complex128", "not a real number"), ("<U5", "must hold floats"),
                                            ("object", "pickle")])
def test_wrong_dtypes(model_dir, dtype, message):
    data = np.load(model_dir / "model.components_.data.npy")
    if dtype == "object":
        np.save(model_dir / "model.components_.data.npy", np.array([{"a": 1}] * 3, dtype=object),
                allow_pickle=True)
    else:
        _set(model_dir, "model.components_.data.npy", data.astype(dtype))
    _refused(model_dir, message)


def test_unicode_data_with_a_matching_manifest(model_dir):
    data = np.load(model_dir / "model.components_.data.npy").astype("<U5")
    _set(model_dir, "model.components_.data.npy", data)
    _edit(model_dir, lambda m: m["components"]["model"]["arrays"]["components_"]["parts"]["data"].update(dtype="<U5"))
    _refused(model_dir, "must hold floats")


def test_pickle_payload_is_never_executed(model_dir, tmp_path):
    marker = tmp_path / "RAN"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    with open(model_dir / "model.objective_.npy", "wb") as f:
        np.save(f, np.array([Payload()], dtype=object), allow_pickle=True)
    _edit(model_dir, lambda m: m["components"]["model"]["arrays"]["objective_"].update(dtype="object", shape=[1]))
    _refused(model_dir, "pickle")
    assert not marker.exists()
    pickle.dumps(Payload())  # (the payload is real: unpickling it would create the file)


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "folder"])
def test_not_a_regular_file(model_dir, kind):
    target = model_dir / "model.objective_.npy"
    target.unlink()
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", target)
    else:
        target.mkdir()

    def hung(*_):
        raise AssertionError("loading hung on a special file")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        msg = _refused(model_dir, "is not a regular file")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert "missing" not in msg


def test_inconsistent_vocabulary_says_the_model_is_damaged(model_dir, capsys):
    def shorter(m):
        for key in ("vocabulary", "df", "idf"):
            arr = np.load(model_dir / m["components"]["vectorizer"]["arrays"][key]["file"])[:-1]
            _set(model_dir, m["components"]["vectorizer"]["arrays"][key]["file"], arr)
            m["components"]["vectorizer"]["arrays"][key]["shape"] = list(arr.shape)
        m["components"]["vectorizer"]["meta"]["n_terms"] -= 1

    _edit(model_dir, shorter)
    msg = _refused(model_dir, "is damaged", "disagree on the number of terms")
    assert "same vectorizer" not in msg
    assert main(["-q", "transform", str(model_dir), str(model_dir)]) == 2
    err = capsys.readouterr().err
    assert "is damaged" in err and "same vectorizer" not in err


@pytest.mark.parametrize("field, value, message", [
    (("format_version",), "1", "invalid format_version"),
    (("components", "model", "arrays", "components_", "shape"), [3, -1], "non-negative integers"),
    (("components", "model", "arrays", "objective_", "shape"), [10**12], "manifest says"),
    (("components", "model", "class"), "os.system", "unknown class"),
    (("components", "model", "meta", "params", "lambda2"), "x", "damaged"),
    (("components", "model", "meta", "params", "n_components"), 7, "damaged"),
    (("components", "vectorizer", "meta", "params", "stop_words"), 3, "stop_words"),
    (("components", "vectorizer", "meta", "n_docs"), 0, "n_docs"),
])
def test_manifest_fields_are_type_checked(model_dir, field, value, message):
    def put(m):
        node = m
        for k in field[:-1]:
            node = node[k]
        node[field[-1]] = value

    _edit(model_dir, put)
    _refused(model_dir, message)


def test_manifest_too_deep_or_not_json(model_dir):
    (model_dir / "manifest.json").write_text("[" * 100000 + "]" * 100000)
    _refused(model_dir, "manifest.json")
    (model_dir / "manifest.json").write_bytes(b"\xff\xfe{")
    _refused(model_dir, "not UTF-8")


def test_mmap_load_is_checked_too(model_dir):
    ind = np.load(model_dir / "model.components_.indices.npy")
    ind[0] = 10**6
    _set(model_dir, "model.components_.indices.npy", ind)
    with pytest.raises(ModelFormatError, match="column index 1000000"):
        io.load(model_dir, mmap=True)
