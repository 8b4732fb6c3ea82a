"""A checkpoint is as untrusted as a model folder: every damage to the state or a W part is refused with
one line before the resumed fit reads it (no read past a W part's end, no NaN objective carried on)."""

import math
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import planted_corpus
from rlsi import io
from rlsi.distributed import DaskRLSI, checkpoint
from rlsi.distributed.checkpoint import Arrays, part_path
from rlsi.errors import ModelFormatError, RLSIError

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

PARAMS = dict(n_components=4, lambda1=0.5, tol=1e-12, random_state=3)


@pytest.fixture(scope="module")
def X():
    return planted_corpus(n_docs=90, n_terms=60, n_topics=4, seed=5)


@pytest.fixture(scope="module")
def made(X, cluster_of, tmp_path_factory):
    """The checkpoint a distributed fit writes after 2 iterations over 2 partitions (the damage cases start
    from copies of it)."""
    ckpt = tmp_path_factory.mktemp("ckpt") / "c"
    DaskRLSI(**PARAMS, max_iter=2, client=cluster_of(2), checkpoint_dir=ckpt).fit(X)
    return ckpt


def _state(ckpt):
    state = io.load(ckpt / "state")["state"]
    return dict(state.meta), state.arrays["U"]


def _write_state(ckpt, meta, U):
    shutil.rmtree(ckpt / "state")
    io.save(ckpt / "state", state=Arrays(meta, {"U": U}))


def _write_w(ckpt, p, W):
    path = part_path(ckpt, 2, p)
    shutil.rmtree(path)
    io.save(path, doc_vectors=Arrays({"partition": path.name}, {"W": W}))


def _w(ckpt, p=0):
    return io.load(part_path(ckpt, 2, p))["doc_vectors"].arrays["W"]


def _fewer_rows(ckpt):
    _write_w(ckpt, 0, _w(ckpt)[:-1])


def _more_rows(ckpt):
    W = _w(ckpt)
    _write_w(ckpt, 0, np.vstack([W, np.zeros((1000, W.shape[1]))]))


def _outside_link(ckpt):
    outside = ckpt.parent / "elsewhere"
    shutil.copytree(part_path(ckpt, 2, 0), outside)
    shutil.rmtree(part_path(ckpt, 2, 0))
    part_path(ckpt, 2, 0).symlink_to(outside)


def _missing_part(ckpt):
    shutil.rmtree(part_path(ckpt, 2, 1))


def _int_u(ckpt):
    meta, U = _state(ckpt)
    U = U.toarray() if sp.issparse(U) else U
    _write_state(ckpt, meta, (U * 100).astype(np.int64))


def _nan_objective(ckpt):
    meta, U = _state(ckpt)
    meta["objectives"] = [math.nan, *meta["objectives"][1:]]
    _write_state(ckpt, meta, U)


def _wrong_u_shape(ckpt):
    meta, U = _state(ckpt)
    U = U.toarray() if sp.issparse(U) else U
    _write_state(ckpt, meta, U[:, :-1])


def _odd_iteration(ckpt):
    meta, U = _state(ckpt)
    meta["iteration"] = "2"
    _write_state(ckpt, meta, U)


def _missing_key(ckpt):
    meta, U = _state(ckpt)
    del meta["seconds"]
    _write_state(ckpt, meta, U)


def _odd_partitions(ckpt):
    meta, U = _state(ckpt)
    meta["partitions"] = [[0, 10 ** 9]]
    _write_state(ckpt, meta, U)


CASES = {
    "W one row short": (_fewer_rows, "partition 0 has"),
    "W 1000 rows long": (_more_rows, "partition 0 has"),
    "W part links outside": (_outside_link, "outside the checkpoint directory"),
    "W part missing": (_missing_part, "lacks W-000002-p1"),
    "U int64": (_int_u, "U must be a 2-D float array"),
    "NaN objective": (_nan_objective, "'objectives' must be a list of 2 finite numbers"),
    "U of the wrong shape": (_wrong_u_shape, "U has shape"),
    "iteration a string": (_odd_iteration, "'iteration' must be a non-negative integer"),
    "seconds missing": (_missing_key, "'seconds'"),
    "partitions beyond the documents": (_odd_partitions, "'partitions' must be"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_damaged_checkpoint_is_refused_in_one_line(made, tmp_path, case):
    damage, words = CASES[case]
    ckpt = tmp_path / "c"
    shutil.copytree(made, ckpt, symlinks=True)
    damage(ckpt)
    with pytest.raises(ModelFormatError) as err:
        checkpoint.read_state(ckpt)
    message = str(err.value)
    assert words in message and "\n" not in message


def test_the_resumed_fit_refuses_it_before_any_work(made, X, cluster_of, tmp_path):
    ckpt = tmp_path / "c"
    shutil.copytree(made, ckpt)
    _fewer_rows(ckpt)
    with pytest.raises(ModelFormatError, match="partition 0 has"):
        DaskRLSI(**PARAMS, max_iter=4, client=cluster_of(2), checkpoint_dir=ckpt, resume=True).fit(X)


def test_the_intact_checkpoint_resumes(made, X, cluster_of, tmp_path):
    """The checkpoint the damage cases start from is sound: a fit resumed from it to 4 iterations is the
    uninterrupted 4-iteration fit (topics, training vectors and objectives, bit for bit)."""
    meta, U = checkpoint.read_state(made)
    assert meta["iteration"] == 2 and U.shape == (60, 4)
    ckpt = tmp_path / "c"
    shutil.copytree(made, ckpt)
    resumed = DaskRLSI(**PARAMS, max_iter=4, client=cluster_of(2), checkpoint_dir=ckpt, resume=True)
    W = resumed.fit_transform(X)
    full = DaskRLSI(**PARAMS, max_iter=4, client=cluster_of(2))
    W_full = full.fit_transform(X)
    assert resumed.resumed_from_ == 2 and resumed.n_iter_ == 4
    assert resumed.objective_[:2].tolist() == meta["objectives"]
    assert (resumed.components_ != full.components_).nnz == 0
    np.testing.assert_array_equal(W, W_full)
    np.testing.assert_array_equal(resumed.objective_, full.objective_)


def test_a_checkpoint_dir_naming_a_file_is_refused_before_any_work(X, cluster_of, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("mine")
    with pytest.raises(RLSIError, match="exists and is not a folder"):
        DaskRLSI(**PARAMS, max_iter=2, client=cluster_of(2), checkpoint_dir=f).fit(X)
    assert f.read_text() == "mine"


def test_a_checkpoint_dir_inside_or_equal_to_an_rlsi_folder_is_refused(tmp_path):
    io.save_matrix(tmp_path / "mx", sp.identity(3, format="csr"))
    with pytest.raises(RLSIError, match="is an rlsi matrix directory"):
        checkpoint.check_directory(tmp_path / "mx")
    with pytest.raises(RLSIError, match="is inside"):
        checkpoint.check_directory(tmp_path / "mx" / "ckpt")
    assert checkpoint.check_directory(tmp_path / "new") == tmp_path / "new"
