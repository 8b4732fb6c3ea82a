"""docs/learners.md says what a new learner writes; these tests hold it to the code (GroupNMF and STC are
its worked examples)."""

import re
from pathlib import Path

import pytest

from rlsi.models import CNMF, BatchRLSI, GroupNMF, GroupRLSI, MedSTC, SparseTopicalCoding
from rlsi.models.group_base import GroupModel
from rlsi.models.group_nmf import GroupNMFProblem
from rlsi.models.skeleton import AlternatingFit
from rlsi.models.stc.batch import STCProblem

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "learners.md").read_text(encoding="utf-8")


def _own(cls):
    return set(vars(cls))


def test_the_hooks_the_page_names_are_the_skeletons():
    hooks = set(re.findall(r"`(_[a-z_]+)\(", PAGE)) | {"_tol_param"}
    skeleton = {"_check_fit_input", "_start", "_finish", "_fit_output", "_fit_threads", "_open_executor",
                "_alternate_options", "_tol_param"}
    assert skeleton <= hooks
    for name in skeleton:
        assert hasattr(AlternatingFit, name), name


def test_group_nmf_writes_what_the_page_says():
    assert {"_check_fit_input", "_start", "_parameter_constraints", "__init__"} <= _own(GroupNMF)
    assert not {"fit", "fit_transform", "_finish", "_fit_output"} & _own(GroupNMF)
    assert {"_finish", "_fit_output", "_split"} <= _own(GroupModel)  # written once for GroupRLSI and GroupNMF
    assert GroupNMF._fold_penalty == "nonneg_l2"
    for name in ("u_step", "v_step", "objective", "components", "doc_vectors"):
        assert name in vars(GroupNMFProblem), name
    assert issubclass(GroupRLSI, GroupModel) and issubclass(CNMF, GroupNMF)


def test_stc_writes_what_the_page_says():
    assert SparseTopicalCoding._tol_param == "fit_tol"
    assert {"_fit_threads", "_check_fit_input", "_start", "_finish", "_fit_output"} <= _own(SparseTopicalCoding)
    assert {"_fit_extras", "_finish"} <= _own(MedSTC)
    for name in ("u_step", "v_step", "objective"):
        assert name in vars(STCProblem), name


def test_batch_rlsi_is_the_plain_learner_of_the_page():
    assert {"_check_fit_input", "_start", "_finish", "_fit_output"} <= _own(BatchRLSI)
    assert not {"fit", "fit_transform"} & _own(BatchRLSI)


@pytest.mark.parametrize("path", sorted(set(re.findall(r"`((?:models|distributed|kernels)/[\w/]+\.py)`", PAGE))))
def test_the_modules_the_page_names_exist(path):
    assert (ROOT / "src" / "rlsi" / path).is_file(), path


def test_the_page_speaks_in_the_present():
    assert not re.search(r"\b(session|issue) \d|\bas before\b|benchmarks/results", PAGE)
