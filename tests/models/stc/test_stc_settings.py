"""The named STC settings: the released code's values in rlsi's conventions, per learner."""

import pytest

from rlsi.errors import RLSIError
from rlsi.models.stc import MedSTC, OnlineMedSTC, OnlineSTC, SparseTopicalCoding
from rlsi.models.stc.settings import stc_params


def test_released_values_in_the_half_convention():
    p = stc_params("released", MedSTC)
    # released λ = γ = 0.1 in λ‖θ‖² + γΣ‖s − θ‖² is 0.2 in (λ/2)‖θ‖² + (γ/2)Σ‖s − θ‖²
    assert (p["lam"], p["gamma"], p["rho"], p["C"], p["delta"]) == (0.2, 0.2, 0.01, 0.5, 3600.0)
    assert (p["max_sweeps"], p["tol"], p["max_iter"], p["fit_tol"]) == (21, 1e-4, 100, 1e-4)
    assert p["dictionary_step"] == "lbfgs" and p["keep_word_codes"]
    MedSTC(**p)._validate_params()


@pytest.mark.parametrize("cls", [SparseTopicalCoding, OnlineSTC, MedSTC, OnlineMedSTC])
def test_every_learner_takes_both_presets(cls):
    for name in ("printed", "released", "table2"):
        m = cls(**stc_params(name, cls))
        m._validate_params()
    assert "C" not in stc_params("released", SparseTopicalCoding)
    # the online learners take the released solver on each mini-batch's codes (no keep_word_codes)
    assert stc_params("released", OnlineSTC)["dictionary_step"] == "lbfgs"
    assert "keep_word_codes" not in stc_params("released", OnlineMedSTC)


def test_printed_values_and_overrides():
    p = stc_params("printed", SparseTopicalCoding, max_iter=3)
    assert (p["lam"], p["gamma"], p["rho"], p["max_iter"]) == (0.01, 0.01, 0.1, 3)
    with pytest.raises(RLSIError, match="unknown STC settings"):
        stc_params("paper", SparseTopicalCoding)
    with pytest.raises(RLSIError, match="no parameter"):
        stc_params("printed", SparseTopicalCoding, C=1.0)


def test_table2_is_the_released_preset_with_the_documents_start_and_lda_for_unsupervised_stc():
    med, stc = stc_params("table2", MedSTC), stc_params("table2", SparseTopicalCoding)
    assert med == dict(stc_params("released", MedSTC), dictionary_init="documents", max_iter=10, fit_tol=0.0)
    assert (stc["dictionary_step"], stc["max_iter"], stc["dictionary_init"]) == ("projected", 4, "lda")
    assert "max_iter" not in stc_params("table2", OnlineSTC)


def test_table2_online_rows():
    med, stc = stc_params("table2", OnlineMedSTC), stc_params("table2", OnlineSTC)
    assert (med["dictionary_step"], med["svm_codes"], med["batch_size"], med["tau0"], med["hinge"]) == \
        ("lbfgs", "label_free", 16, 10.0, "linearized")
    assert (stc["dictionary_step"], stc["batch_size"], stc["tau0"], stc["dictionary_init"]) == \
        ("projected", 32, 1.0, "lda")
    assert stc_params("table2", OnlineMedSTC)["dictionary_init"] == "documents"
    assert stc_params("released", OnlineMedSTC).get("svm_codes", "joint") == "joint"


@pytest.mark.parametrize("cls", [SparseTopicalCoding, OnlineSTC, MedSTC, OnlineMedSTC])
def test_the_class_defaults_are_the_table2_preset_and_printed_restores_the_paper(cls):
    defaults = cls().get_params()
    assert {k: defaults[k] for k in stc_params("table2", cls)} == stc_params("table2", cls)
    printed = cls(**stc_params("printed", cls)).get_params()
    assert (printed["lam"], printed["gamma"], printed["rho"]) == (0.01, 0.01, 0.1)
    assert printed["dictionary_step"] == "mm" and printed["dictionary_init"] == "documents"


def test_a_table2_fit_runs_its_iterations_without_a_convergence_warning():
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from models.stc._stc_synth import planted_counts

    X, y = planted_counts(n_docs=30, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        med = MedSTC(3, refit_C=1.0).fit(X, y)
    assert med.n_iter_ == 10
    with pytest.warns(ConvergenceWarning, match="max_iter"):  # a fit with a convergence test still warns
        MedSTC(3, refit_C=1.0, max_iter=2, fit_tol=1e-12).fit(X, y)
