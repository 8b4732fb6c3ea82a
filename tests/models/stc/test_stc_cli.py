"""``rlsi fit-stc`` and ``rlsi classify`` on a tiny labelled corpus."""

import json

import numpy as np
import pytest

from rlsi.cli.main import main


def _corpus(path, n=40, seed=0):
    rng = np.random.default_rng(seed)
    words = {"space": "orbit rocket launch nasa moon shuttle", "hockey": "goal puck ice team skate season"}
    with open(path, "w") as fh:
        for i in range(n):
            label = "space" if i % 2 else "hockey"
            text = " ".join(rng.choice(words[label].split(), 12))
            fh.write(json.dumps({"id": str(i), "text": text, "label": label,
                                 "split": "train" if i < 30 else "test"}) + "\n")


def test_fit_stc_and_classify(tmp_path, capsys):
    _corpus(tmp_path / "c.jsonl")
    for model, options in (("ostc", ["--batch-size", "10", "--epochs", "3"]), ("medstc", ["--max-iter", "3",
                                                                                          "--delta", "5"])):
        out = tmp_path / model
        assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "--model", model, "-k", "2",
                     *options, "--split-field", "split"]) == 0
        capsys.readouterr()
        assert main(["classify", str(out), str(tmp_path / "c.jsonl"), "--split-field", "split"]) == 0
        text = capsys.readouterr().out
        assert "accuracy" in text and "hockey" in text and "space" in text


def test_classify_bad_field_is_one_line_error(tmp_path, capsys):
    _corpus(tmp_path / "c.jsonl")
    out = tmp_path / "m"
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "-k", "2", "--max-iter", "1"]) == 0
    assert main(["classify", str(out), str(tmp_path / "c.jsonl"), "--label-field", "nope", "--same-documents"]) == 2
    assert "no field 'nope'" in capsys.readouterr().err


def test_fit_stc_dictionary_step_option_reaches_the_model(tmp_path):
    from rlsi import io

    _corpus(tmp_path / "c.jsonl")
    for step in ("projected", "mm"):
        out = tmp_path / step
        assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "-k", "2", "--max-iter", "1",
                     "--dictionary-step", step, "--rho", "0.01", "--eps", "0.002"]) == 0
        model = io.load(out)["model"]
        assert (model.dictionary_step, model.rho, model.eps) == (step, 0.01, 0.002)


def test_fit_stc_rejects_a_non_positive_eps_in_one_line(tmp_path, capsys):
    _corpus(tmp_path / "c.jsonl")
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "m"), "-k", "2",
                 "--max-iter", "1", "--eps", "0"]) == 2
    err = capsys.readouterr().err
    assert "eps" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_fit_stc_medstc_options_reach_the_model(tmp_path):
    from rlsi import io

    _corpus(tmp_path / "c.jsonl")
    out = tmp_path / "med"
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "--model", "medstc", "-k", "2",
                 "--max-iter", "2", "--delta", "5", "--split-field", "split", "--dictionary-init", "class",
                 "--hinge", "linearized"]) == 0
    model = io.load(out)["model"]
    assert (model.dictionary_init, model.hinge) == ("class", "linearized")


def test_fit_stc_refit_C_reaches_the_model_and_is_saved(tmp_path):
    from rlsi import io

    _corpus(tmp_path / "c.jsonl")
    out = tmp_path / "med"
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "--model", "medstc", "-k", "2",
                 "--max-iter", "2", "--delta", "5", "--split-field", "split", "--refit-C", "0.5"]) == 0
    model = io.load(out)["model"]
    assert model.refit_C == 0.5 and model.refit_C_ == 0.5


def test_fit_stc_rejects_a_bad_refit_C_in_one_line(tmp_path, capsys):
    _corpus(tmp_path / "c.jsonl")
    for bad in ("-1", "often", "nan"):
        try:
            code = main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "m"), "--model",
                         "medstc", "-k", "2", "--refit-C", bad])
        except SystemExit as exc:  # argparse's usage error
            code = exc.code
        assert code == 2
        err = capsys.readouterr().err
        assert "refit-C" in err and repr(bad) in err
        assert not (tmp_path / "m").exists()


def test_fit_stc_lda_start_reaches_the_model(tmp_path):
    from rlsi import io

    _corpus(tmp_path / "c.jsonl")
    out = tmp_path / "lda"
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "-k", "2", "--max-iter", "1",
                 "--dictionary-init", "lda"]) == 0
    assert io.load(out)["model"].dictionary_init == "lda"
    out2 = tmp_path / "lda2"
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out2), "-k", "2", "--max-iter", "1",
                 "--dictionary-init", "lda", "--lda-passes", "2"]) == 0
    model = io.load(out2)["model"]
    assert (model.dictionary_init, model.lda_passes) == ("lda", 2)


def test_fit_stc_class_start_without_labels_is_one_line_error(tmp_path, capsys):
    _corpus(tmp_path / "c.jsonl")
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "m"), "-k", "2",
                 "--dictionary-init", "class"]) == 2
    err = capsys.readouterr().err
    assert "needs labels" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_fit_stc_settings_preset_with_command_line_overrides(tmp_path):
    from rlsi import io
    from rlsi.models.stc import MedSTC
    from rlsi.models.stc.settings import stc_params

    _corpus(tmp_path / "c.jsonl")
    out = tmp_path / "med"
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "--model", "medstc",
                 "--settings", "table2", "-k", "2", "--max-iter", "1", "--split-field", "split"]) == 0
    model = io.load(out)["model"]
    preset = stc_params("table2", MedSTC)
    for name in ("lam", "gamma", "rho", "C", "delta", "hinge", "dictionary_step", "dictionary_init",
                 "keep_word_codes", "max_sweeps"):
        assert getattr(model, name) == preset[name], name
    assert (model.n_components, model.max_iter) == (2, 1)  # the command line overrides the preset
    assert (model.lam, model.rho, model.dictionary_step) == (0.2, 0.01, "lbfgs")


def test_fit_stc_without_settings_keeps_the_class_defaults(tmp_path):
    from rlsi import io
    from rlsi.models.stc import SparseTopicalCoding

    _corpus(tmp_path / "c.jsonl")
    out = tmp_path / "m"
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "-k", "2", "--max-iter", "1"]) == 0
    model = io.load(out)["model"]
    defaults = SparseTopicalCoding().get_params()
    for name in ("lam", "gamma", "rho", "eps", "dictionary_step", "dictionary_init", "keep_word_codes"):
        assert getattr(model, name) == defaults[name], name


def test_fit_stc_lbfgs_step_and_svm_codes_reach_an_online_model(tmp_path):
    from rlsi import io

    _corpus(tmp_path / "c.jsonl")
    out = tmp_path / "m"
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "--model", "omedstc", "-k", "2",
                 "--dictionary-step", "lbfgs", "--svm-codes", "label_free", "--tau0", "0.5", "--delta", "5",
                 "--batch-size", "10", "--split-field", "split"]) == 0
    model = io.load(out)["model"]
    assert (model.dictionary_step, model.svm_codes, model.tau0) == ("lbfgs", "label_free", 0.5)


def test_fit_stc_table2_preset_gives_the_online_row_unless_an_option_overrides_it(tmp_path):
    from rlsi import io

    _corpus(tmp_path / "c.jsonl")
    for extra, batch_size in (([], 16), (["--batch-size", "10"], 10)):
        out = tmp_path / f"m{batch_size}"
        assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(out), "--model", "omedstc", "-k", "2",
                     "--settings", "table2", "--delta", "5", "--split-field", "split"] + extra) == 0
        model = io.load(out)["model"]
        assert (model.batch_size, model.tau0, model.svm_codes, model.dictionary_step) == \
            (batch_size, 10.0, "label_free", "lbfgs")


@pytest.mark.parametrize("model, option", [("stc", ["--batch-size", "8"]), ("stc", ["--epochs", "2"]),
                                           ("cstc", ["--tau0", "2"]), ("ostc", ["--max-iter", "3"]),
                                           ("stc", ["--delta", "5"]), ("ostc", ["--C", "2"]),
                                           ("stc", ["--hinge", "linearized"]), ("ostc", ["--refit-C", "joint"]),
                                           ("medstc", ["--svm-codes", "joint"]), ("stc", ["--lda-passes", "2"])])
def test_an_option_of_other_models_is_refused_in_one_line(tmp_path, capsys, model, option):
    _corpus(tmp_path / "c.jsonl")
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "m"), "--model", model, "-k",
                 "2", *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlsi: error: ") and option[0] in err and err.count("\n") == 1, err
    assert not (tmp_path / "m").exists()


def test_lda_passes_apply_with_an_lda_start(tmp_path):
    from rlsi import io

    _corpus(tmp_path / "c.jsonl")
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "m"), "-k", "2", "--max-iter", "1",
                 "--dictionary-init", "lda", "--lda-passes", "2"]) == 0
    assert io.load(tmp_path / "m")["model"].lda_passes == 2


def test_labels_that_are_lists_take_their_first_label(tmp_path, capsys):
    """MedSTC on a corpus whose label field holds lists (multi-label collections): the first label of each, as
    for the group models; a document without any label is one line naming it."""
    from rlsi import io

    rng = np.random.default_rng(1)
    with open(tmp_path / "c.jsonl", "w") as fh:
        for i in range(30):
            fh.write(json.dumps({"text": " ".join(rng.choice("orbit rocket goal puck ice moon".split(), 8)),
                                 "label": ["space", "sci"] if i % 2 else ["hockey"]}) + "\n")
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "m"), "--model", "medstc", "-k",
                 "2", "--max-iter", "1"]) == 0
    assert sorted(io.load(tmp_path / "m")["model"].classes_) == ["hockey", "space"]
    with open(tmp_path / "c.jsonl", "a") as fh:
        fh.write(json.dumps({"text": "orbit", "label": []}) + "\n")
    assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "m2"), "--model", "medstc", "-k",
                 "2", "--max-iter", "1"]) == 2
    err = capsys.readouterr().err
    assert "document 31" in err and err.count("\n") == 1


def test_medstc_refuses_several_labels_per_document_in_one_line():
    import scipy.sparse as sp

    from rlsi.errors import RLSIError
    from rlsi.models.stc import MedSTC

    X = sp.csr_matrix(np.random.default_rng(0).poisson(1.0, (10, 8)).astype(float))
    for y in ([["a", "b"]] * 5 + [["c"]] * 5, [{"a": 1}] * 10):
        with pytest.raises(RLSIError, match="one label per document") as info:
            MedSTC(2, max_iter=1).fit(X, y)
        assert "\n" not in str(info.value)


def test_a_fit_that_would_not_fit_in_memory_is_refused_before_it_starts(tmp_path, capsys):
    """K = 50,000 topics on 2,000 terms: the dictionary and the coding statistics are GBs, refused at once
    (without the preflight: minutes of work, then "out of memory")."""
    rng = np.random.default_rng(2)
    with open(tmp_path / "c.jsonl", "w") as fh:
        for i in range(40):
            fh.write(json.dumps({"text": " ".join(f"w{j}" for j in rng.choice(2000, 60)), "label": str(i % 2)}) + "\n")
    for model in ("stc", "medstc", "ostc"):
        assert main(["-q", "fit-stc", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "m"), "--model", model, "-k",
                     "50000", "--memory-limit", "2G"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("rlsi: error: this fit needs about") and "dictionary" in err and "-k" in err, err
        assert err.count("\n") == 1 and not (tmp_path / "m").exists()
