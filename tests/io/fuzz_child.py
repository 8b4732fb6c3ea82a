"""Child process of the model-loader fuzz test (tests/io/test_fuzz_loader.py); not collected by pytest.

Usage: python fuzz_child.py PRISTINE_DIR WORK_DIR SEED N_TRIALS TEXTS_JSON MARKER_FILE [KIND]

KIND: ``model`` (default: a model directory, with or without a model and an index), ``matrix`` (a matrix
directory: loaded with ``load_matrix``, then its rows, ids and counts are used and XᵀX is formed) or
``checkpoint`` (a distributed fit's checkpoint folder: the state or a W part is mutated, then
``read_state`` runs and every W part is loaded as the resuming workers load it).

For each trial: copy the pristine model directory, apply 1-3 seeded mutations (bytes, values, dtypes,
shapes, manifest fields, file paths, file kinds), then load it (alternately memory-mapped) and, if it
loads, fold the texts in and search: every result must be finite, or the library must raise its own
one-line error. One JSON line is printed when a trial starts and one when it ends, so that the parent
can name the mutation of a trial that killed the process (a signal, or SIGALRM after a hang).

Every other trial is *forged*: after the mutations its checksums are recorded again (``reseal`` of
tests/forge.py, what a crafted folder carries), so that the loaders' own checks of paths, types, shapes and
values are what must hold. The other trials are *damaged*: their checksums are the pristine folder's, and a
trial whose folder differs from the pristine one in any byte (``changed`` in its record) must be refused.
"""

import json
import os
import shutil
import signal
import sys
import traceback
from pathlib import Path

import numpy as np

from rlsi import io
from rlsi.errors import ModelFormatError, RLSIError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the forger's helper
from forge import reseal  # noqa: E402

HANG_SECONDS = 10  # SIGALRM (default action: terminate) if one trial runs longer than this


class Payload:
    """Unpickling this would create the marker file: it must never happen."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


JUNK = [None, True, False, -1, 0, 1, 7, 2**31, 2**64, 10**40, 1e308, -1e308, 1.5, float("nan"), float("inf"),
        "", "x", "../x.npy", "/etc/passwd", "float16", "complex128", "<U5", "O", "|O", "(a|aa)+$", "l3",
        [], {}, [1, 2], [-1], [10**12], {"a": 1}, ["a", 3], [[[[[[[[]]]]]]]]]


def _manifest(d):
    return json.loads((d / "manifest.json").read_text())


def _write_manifest(d, m):
    (d / "manifest.json").write_text(json.dumps(m))


def _npy_files(d):
    """Regular .npy files not yet turned into something else by an earlier mutation."""
    return sorted(p for p in d.iterdir() if p.suffix == ".npy" and p.is_file() and not p.is_symlink())


def _entries(m):
    """(component, key, entry-dict) for every file entry of the manifest (CSR parts included)."""
    out = []
    for cname, comp in m["components"].items():
        for key, e in comp["arrays"].items():
            if e.get("kind") == "csr":
                for part, pe in e["parts"].items():
                    out.append((cname, f"{key}.{part}", pe))
            else:
                out.append((cname, key, e))
    return out


def _resave(d, path, arr, m, update_manifest, allow_pickle=False):
    np.save(path, arr, allow_pickle=allow_pickle)
    if update_manifest:
        for _, _, e in _entries(m):
            if e["file"] == path.name:
                e["dtype"] = str(arr.dtype)
                e["shape"] = list(arr.shape)
        _write_manifest(d, m)


def mutate(d, rng, marker):
    m = _manifest(d)
    files = _npy_files(d)
    kind = rng.choice(["flip", "flip_data", "truncate", "append", "index", "indptr", "value", "dtype", "shape",
                       "manifest_value", "manifest_key", "targeted", "fs", "pickle", "swap", "vocab"])
    path = files[rng.integers(len(files))]
    if kind in ("flip", "flip_data"):
        target = d / "manifest.json" if kind == "flip" and rng.random() < 0.2 else path
        data = bytearray(target.read_bytes())
        start = 128 if kind == "flip_data" and len(data) > 128 else 0
        for _ in range(rng.integers(1, 5)):
            if len(data) > start:
                pos = int(rng.integers(start, len(data)))
                data[pos] ^= 1 << int(rng.integers(8))
        target.write_bytes(bytes(data))
        return f"{kind} {target.name}"
    if kind == "truncate":
        data = path.read_bytes()
        path.write_bytes(data[: int(rng.integers(0, len(data)))])
        return f"truncate {path.name}"
    if kind == "append":
        with open(path, "ab") as f:
            f.write(rng.bytes(int(rng.integers(1, 64))))
        return f"append {path.name}"
    if kind in ("index", "indptr"):
        cands = [p for p in files if p.name.endswith(f".{kind}.npy") or (kind == "index" and "indices" in p.name)]
        if not cands:
            return "none"
        path = cands[rng.integers(len(cands))]
        arr = np.load(path)
        if arr.size == 0:
            return "none"
        i = int(rng.integers(arr.size))
        if kind == "index":
            value = [-7, -1, 10**6, 2**31 - 1, int(arr.max()) + 1][rng.integers(5)]
        else:
            value = [-5, int(arr[-1]) + 5, 2**31 - 1, int(arr[max(i - 1, 0)]) - 1][rng.integers(4)]
        arr = arr.copy()
        arr.flat[i] = np.array(value).astype(arr.dtype)
        np.save(path, arr)
        return f"{kind} {path.name}[{i}]={value}"
    if kind == "value":
        floats = [p for p in files if np.load(p).dtype.kind == "f" and np.load(p).size]
        path = floats[rng.integers(len(floats))]
        arr = np.load(path).copy()
        value = [np.nan, np.inf, -np.inf, 1e300, -1e300, 1e30, 1e-310, 0.0, -5.0][rng.integers(9)]
        with np.errstate(over="ignore"):
            arr.flat[int(rng.integers(arr.size))] = value
        np.save(path, arr)
        return f"value {path.name}={value}"
    if kind == "dtype":
        arr = np.load(path)
        new = ["complex128", "<U5", "bool", "float16", "int8", "uint64", ">f8", "float32", "int64", "S3",
               "datetime64[s]", "V8", "object"][rng.integers(13)]
        upd = bool(rng.random() < 0.7)
        if new == "object":
            _resave(d, path, np.array([Payload(str(marker))] * max(arr.size, 1), dtype=object), m, upd,
                    allow_pickle=True)
        else:
            try:
                conv = arr.astype(new)
            except (TypeError, ValueError):
                conv = np.zeros(arr.shape, dtype=new)
            _resave(d, path, conv, m, upd)
        return f"dtype {path.name} -> {new} (manifest {'updated' if upd else 'kept'})"
    if kind == "shape":
        arr = np.load(path).reshape(-1)
        op = rng.integers(4)
        if op == 0:
            arr = arr[: max(arr.size - 1, 0)]
        elif op == 1:
            arr = np.concatenate([arr, arr[:3]])
        elif op == 2 and arr.size % 2 == 0:
            arr = arr.reshape(2, -1)
        else:
            arr = arr[:0]
        upd = bool(rng.random() < 0.7)
        _resave(d, path, arr, m, upd)
        return f"shape {path.name} op{op} (manifest {'updated' if upd else 'kept'})"
    if kind in ("manifest_value", "manifest_key"):
        node, trail = m, []
        while isinstance(node, (dict, list)) and node and (not trail or rng.random() < 0.8):
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            k = keys[rng.integers(len(keys))]
            trail.append((node, k))
            node = node[k]
        if not trail:
            return "none"
        parent, k = trail[-1]
        if kind == "manifest_key" and isinstance(parent, dict):
            if rng.random() < 0.5:
                del parent[k]
                what = "delete"
            else:
                parent["extra_" + str(k)] = JUNK[rng.integers(len(JUNK))]
                what = "add"
        else:
            parent[k] = JUNK[rng.integers(len(JUNK))]
            what = f"= {parent[k]!r}"[:40]
        _write_manifest(d, m)
        return f"{kind} {'/'.join(str(k) for _, k in trail)} {what}"
    if kind == "targeted":
        entries = _entries(m)
        cname, key, e = entries[rng.integers(len(entries))]
        op = rng.integers(9)
        vec_params = m["components"]["vectorizer"]["meta"]
        vec_params = vec_params.get("vectorizer", vec_params)["params"]
        if op == 0:
            e["file"] = "../" + e["file"]
            shutil.copy(d / Path(e["file"]).name, d.parent / Path(e["file"]).name)
        elif op == 1:
            e["file"] = str((d / e["file"]).resolve())
        elif op == 2:
            e["file"] = "missing.npy"
        elif op == 3:
            e["shape"] = [10**12]
        elif op == 4:
            vec_params["token_pattern"] = ["(a|aa)+$", "(?:x+x+)+y", "\\w+", "[", "(a)(b)"][rng.integers(5)]
        elif op == 5:
            m["format_version"] = [2, 0, "1", 1.0][rng.integers(4)]
        elif op == 6:
            comp = m["components"][list(m["components"])[rng.integers(len(m["components"]))]]
            comp["class"] = ["os.system", "Nope", "TfidfVectorizer", "Searcher", "BatchRLSI"][rng.integers(5)]
        elif op == 7:
            vec_params["stop_words"] = [3, ["a", 3], "french"][rng.integers(3)]
        else:
            e["file"] = m["components"]["vectorizer"]["arrays"]["idf"]["file"]
        _write_manifest(d, m)
        return f"targeted op{op} {cname}.{key}"
    if kind == "fs":
        op = rng.integers(6)
        path.unlink()
        if op == 0:
            os.mkfifo(path)
        elif op == 1:
            os.symlink("/dev/zero", path)
        elif op == 2:  # a valid copy of the file, outside the folder
            outside = d.parent / f"outside-{path.name}"
            shutil.copy(d.parent / "pristine_copy" / path.name, outside)
            os.symlink(outside, path)
        elif op == 3:
            path.mkdir()
        elif op == 4:
            os.symlink(path.name, path)  # a loop
        else:
            os.symlink(files[0].name if files[0] != path else files[-1].name, path)  # another member
        return f"fs op{op} {path.name}"
    if kind == "pickle":
        np.save(path, np.array([Payload(str(marker))], dtype=object), allow_pickle=True)
        return f"pickle {path.name}"
    if kind == "swap":
        other = files[rng.integers(len(files))]
        a, b = path.read_bytes(), other.read_bytes()
        path.write_bytes(b)
        other.write_bytes(a)
        return f"swap {path.name} {other.name}"
    # vocab: a consistent but shorter vocabulary (one term fewer in vocabulary, df and idf)
    vec = m["components"]["vectorizer"]
    for key in ("vocabulary", "df", "idf"):
        p = d / vec["arrays"][key]["file"]
        _resave(d, p, np.load(p)[:-1], m, True)
    meta = vec["meta"].get("vectorizer", vec["meta"])
    meta["n_terms"] -= 1
    _write_manifest(d, m)
    return "vocab shorter by one term"


def tree(d):
    """What a folder holds, to compare with the pristine one: name -> bytes of a file, or what else it is."""
    out = {}
    for p in sorted(Path(d).rglob("*")):
        name = str(p.relative_to(d))
        if p.is_symlink():
            out[name] = "link " + os.readlink(p)
        elif p.is_file():
            out[name] = p.read_bytes()
        else:
            out[name] = "folder" if p.is_dir() else "special"
    return out


def attempt(d, mmap, texts, queries):
    """'loaded', 'error', or a description of what went wrong."""
    stage = "load"
    try:
        bundle = io.load(d, mmap=mmap)
        stage = "use"
        model, vec = bundle.get("model"), bundle.get("vectorizer")
        if model is not None:
            if vec is not None:
                X = vec.transform(texts)
            else:
                X = np.ones((2, model.components_.shape[1]))
            W = np.asarray(model.transform(X))
            if not np.isfinite(W).all():
                return "transform gave NaN/inf"
        index = bundle.get("index")
        if index is not None and vec is not None and (model is not None or index.alpha == 0):
            index.attach(model, vec)
            for hits in index.search_many(queries, k=3):
                if not all(np.isfinite([h.score, h.term_score, h.topic_score]).all() for h in hits):
                    return "search gave NaN/inf"
        return "loaded"
    except RLSIError as exc:
        msg = str(exc)
        if "\n" in msg:
            return f"multi-line error: {msg!r}"
        if stage == "load" and (not isinstance(exc, ModelFormatError) or str(d) not in msg):
            return f"load error not naming the model: {type(exc).__name__}: {msg}"
        return "error: " + msg
    except Exception:  # a foreign exception: the failure this test looks for
        return "foreign exception: " + " | ".join(traceback.format_exc().splitlines()[-4:])


def _error(exc, d, stage):
    msg = str(exc)
    if "\n" in msg:
        return f"multi-line error: {msg!r}"
    if stage == "load" and (not isinstance(exc, ModelFormatError) or str(d) not in msg):
        return f"load error not naming the folder: {type(exc).__name__}: {msg}"
    return "error: " + msg


def attempt_matrix(d, mmap, texts, queries):
    """A matrix directory: load it, use its rows, ids and counts, and the products a fit starts with."""
    from rlsi.io import load_matrix

    stage = "load"
    try:
        m = load_matrix(d, mmap=mmap)
        stage = "use"
        X = m.X
        if not np.isfinite(X @ np.ones(X.shape[1])).all():
            return "matrix rows gave NaN/inf"
        if m.doc_ids is not None and len(set(m.doc_ids.tolist())) != X.shape[0]:
            return "duplicate ids accepted"
        if m.counts is not None:
            m.count_matrix().sum()
        X.sort_indices()  # scipy sorts before many operations: never a write to the read-only map
        # the products a fit starts with (scipy's: no numba compilation inside a timed trial)
        if not np.isfinite((X.T @ X).toarray()).all():
            return "X^T X gave NaN/inf"
        return "loaded"
    except RLSIError as exc:
        return _error(exc, d, stage)
    except Exception:
        return "foreign exception: " + " | ".join(traceback.format_exc().splitlines()[-4:])


def attempt_checkpoint(d, mmap, texts, queries):
    """A checkpoint folder: read_state, then every W part as a resuming worker loads it."""
    from rlsi.distributed import _tasks, checkpoint

    stage = "load"
    try:
        saved = checkpoint.read_state(d)
        if saved is None:
            return "error: no checkpoint"
        stage = "use"
        meta, U = saved
        it, K = meta["iteration"], meta["n_components"]
        for p, (a, b) in enumerate(meta["partitions"]):
            if b <= a:
                continue
            W = _tasks.load_part_w(str(checkpoint.part_path(d, it, p)), np.float64)
            if W.shape != (b - a, K):
                return f"W part {p} of shape {W.shape} accepted for {b - a} rows x {K} topics"
            if not np.isfinite(np.asarray(U @ W.T)).all():
                return "U W^T gave NaN/inf"
        return "loaded"
    except RLSIError as exc:
        return _error(exc, d, stage)
    except Exception:
        return "foreign exception: " + " | ".join(traceback.format_exc().splitlines()[-4:])


def _targets(d, kind):
    """The rlsi folders a trial mutates: the folder itself, or a checkpoint's state and W parts."""
    if kind != "checkpoint":
        return [d]
    return [d / "state", *sorted(p for p in d.glob("W-*") if p.is_dir())]


def main():
    pristine, work, seed, n, texts_file, marker = sys.argv[1:7]
    kind = sys.argv[7] if len(sys.argv) > 7 else "model"
    run = {"model": attempt, "matrix": attempt_matrix, "checkpoint": attempt_checkpoint}[kind]
    pristine, work, marker = Path(pristine), Path(work), Path(marker)
    texts = json.loads(Path(texts_file).read_text())
    queries = texts[:3] + ["unknownword", ""]
    rng = np.random.default_rng(int(seed))
    shutil.copytree(pristine, work / "pristine_copy")
    assert run(pristine, False, texts, queries) == "loaded"  # warm-up (numba) and sanity
    pristine_tree = tree(pristine)
    for i in range(int(n)):
        d = work / f"trial{i}"
        shutil.copytree(pristine, d)
        descs = []
        for _ in range(int(rng.choice([1, 1, 1, 2, 3]))):
            targets = _targets(d, kind)
            target = targets[int(rng.integers(len(targets)))]
            try:
                descs.append(("" if target == d else target.name + ": ") + mutate(target, rng, marker))
            except Exception as exc:  # a mutation that does not apply to an already damaged file
                descs.append(f"skipped ({type(exc).__name__})")
        forged = i % 4 < 2  # two forged, two damaged in every four (mmap alternates within each pair)
        if forged:
            for target in _targets(d, kind):
                reseal(target)
        changed = tree(d) != pristine_tree
        print(json.dumps({"trial": i, "start": descs}), flush=True)
        signal.alarm(HANG_SECONDS)
        outcome = run(d, bool(i % 2), texts, queries)
        signal.alarm(0)
        print(json.dumps({"trial": i, "mutations": descs, "outcome": outcome, "forged": forged,
                          "changed": changed}), flush=True)
        for p in work.glob("outside-*"):
            p.unlink()
        for p in work.glob("*.npy"):
            p.unlink()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
