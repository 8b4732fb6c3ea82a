"""What a new user meets in the first hour: the command line's manners and the library's messages."""

import argparse
import gzip
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline

import rlsi
from rlsi import _progress
from rlsi.cli.main import _subparsers, build_parser, main
from rlsi.models import BatchRLSI, DeadTopicsWarning, GroupRLSI
from cli_runner import run_verbose as run

DOCS = [
    "the heart pumps blood through arteries and veins",
    "blood pressure in arteries rises with heart disease",
    "cardiac surgery repairs the heart valves and arteries",
    "the lens of the eye focuses light on the retina",
    "cataract clouds the lens and blurs vision of the eye",
    "retina damage and vision loss in the eye",
]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for i, text in enumerate(DOCS):
            f.write(json.dumps({"id": f"d{i}", "text": text, "label": "heart" if i < 3 else "eye",
                                "split": "train" if i % 3 else "test"}) + "\n")
    return path


# ------------------------------------------------------------------------------------------ parser
def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"rlsi {rlsi.__version__}"


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_and_verbose_before_or_after_the_command(tmp_path, corpus, where):
    argv = ["fit", str(corpus), "-o", str(tmp_path / "m")]
    args = build_parser().parse_args(["-q", "-v", *argv] if where == "before" else [*argv, "-q", "-v"])
    assert args.quiet is True and args.verbose + getattr(args, "sub_verbose", 0) == 1


def test_every_command_takes_quiet_and_verbose():
    for action in _subparsers(build_parser()):
        for name, parser in action.choices.items():
            assert {"-q", "-v"} <= set(parser._option_string_actions), name


def test_misspelled_command_and_option_get_suggestions(capsys, corpus, tmp_path):
    with pytest.raises(SystemExit):
        main(["fti", str(corpus)])
    assert "did you mean fit?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fit", str(corpus), "-o", str(tmp_path / "m"), "--lamda1", "0.1"])
    err = capsys.readouterr().err
    assert "did you mean --lambda1" in err and "(see 'rlsi fit --help')" in err and err.count("\n") == 1


def test_every_option_has_help_and_help_has_no_rest_markup():
    for action in _subparsers(build_parser()):
        for name, parser in action.choices.items():
            for opt in parser._actions:
                if not isinstance(opt, argparse._HelpAction):
                    assert opt.help, (name, opt.option_strings or opt.dest)
            text = parser.format_help()
            assert "``" not in text and not re.search(r":[a-z]+:`", text), name


# ------------------------------------------------------------------------------------------ commands
def test_evaluate_resolves_the_packaged_collection(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no folder named med here
    status, out, err = run(capsys, "-q", "evaluate", "--collection", "med", "--methods", "bm25",
                           "--protocol", "best")
    assert status == 0, err
    assert re.search(r"BM25\s+0\.\d{4}", out)


def test_classify_refuses_to_test_on_its_training_documents(tmp_path, corpus, capsys):
    model = tmp_path / "stc"
    status, _, err = run(capsys, "-q", "fit-stc", corpus, "-o", model, "-k", 2, "--max-iter", 2)
    assert status == 0, err
    status, _, err = run(capsys, "classify", model, corpus)
    assert status == 2 and "--split-field" in err and "trained on" in err
    status, _, err = run(capsys, "classify", model, corpus, "--split-field", "split", "--test-split", "train")
    assert status == 2 and "both 'train'" in err
    status, out, err = run(capsys, "classify", model, corpus, "--same-documents")
    assert status == 0 and out.startswith("training accuracy"), err
    status, out, err = run(capsys, "classify", model, corpus, "--split-field", "split")
    assert status == 0 and out.startswith("accuracy") and "on 2 documents" in out, err


def test_topics_of_a_model_without_vectorizer_prints_term_indices(tmp_path, capsys):
    X = sp.csr_matrix(np.kron(np.eye(2), np.ones((3, 4))))
    model = BatchRLSI(2, lambda1=0.001, random_state=0).fit(X)
    rlsi.save(tmp_path / "m", model=model)
    status, out, err = run(capsys, "topics", tmp_path / "m", "-n", 2)
    assert status == 0 and "column index" in err
    assert re.search(r"^T1 .* [0-7] [0-7]$", out, re.M)


def test_fit_matrix_given_a_file_talks_about_a_matrix(tmp_path, corpus, capsys):
    status, _, err = run(capsys, "fit", "--matrix", corpus, "-o", tmp_path / "m")
    assert status == 2 and "not a matrix directory" in err and "model" not in err


def test_group_model_without_labels_names_the_missing_field(tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(DOCS)))
    status, _, err = run(capsys, "fit", path, "--model", "grlsi", "-o", tmp_path / "m")
    assert status == 2 and "no field 'label'" in err and "(fields: none)" not in err
    assert "none besides id, title and text" in err


def test_track_report_names_the_lambda_values_used(tmp_path, capsys):
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": t, "date": f"2020-0{1 + i % 2}-01"}) + "\n"
                            for i, t in enumerate(DOCS * 3)))
    status, _, err = run(capsys, "-q", "track", path, "-o", tmp_path / "r", "-k", 2, "--batch-size", 4)
    assert status == 0, err
    header = (tmp_path / "r" / "report.md").read_text().splitlines()[0]
    assert "lambda1=None" not in header and re.search(r"lambda1=[0-9.e-]+,", header)


@pytest.mark.parametrize("verbosity", [["-q"], ["-v"]])
def test_dask_fit_logs_no_info_line_below_vv(tmp_path, corpus, verbosity):
    pytest.importorskip("distributed")
    # a fresh process: the logging set-up and dask's import order are the command's own
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-m", "rlsi.cli.main", "fit", str(corpus), "-o", str(tmp_path / "m"),
                           "-k", "2", "--max-iter", "3", "--backend", "dask", "--workers", "1", *verbosity],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "INFO distributed" not in proc.stderr


# ------------------------------------------------------------------------------------------ library
def test_first_step_gives_no_time_estimate():
    out = io.StringIO()
    bar = _progress.progress_bar(100, "fit", file=out, mininterval=0, disable=False)  # shown, whatever TQDM_DISABLE says
    bar.update(1)  # the step that compiles the kernels on first use
    assert "<?" in str(bar)  # remaining: unknown, not 100 x the first step's time
    bar.update(1)
    assert "<?" not in str(bar)
    bar.close()


def test_compile_notice_when_a_cached_kernel_is_cold(tmp_path):
    src = tmp_path / "cold_kernel.py"
    src.write_text("from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    spec = importlib.util.spec_from_file_location("cold_kernel", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert _progress.kernels_cold(mod.twice)
    mod.twice(1.0)
    assert not _progress.kernels_cold(mod.twice)
    assert not _progress.kernels_cold(len)  # not a numba function: no notice


def test_compile_notice_prints_one_line(tmp_path):
    src = tmp_path / "cold_kernel2.py"
    src.write_text("from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    spec = importlib.util.spec_from_file_location("cold_kernel2", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = io.StringIO()
    assert _progress.compile_notice(mod.twice, file=out)
    assert not _progress.compile_notice(mod.twice, file=out)  # once per process
    assert out.getvalue().count("\n") == 1 and "compiling" in out.getvalue()


def test_compile_notice_watches_the_lasso_kernel():
    from rlsi.kernels.lasso import _lasso_cd_rows

    assert _progress.kernels_cold(_lasso_cd_rows) in (True, False)  # a cached numba dispatcher it can read
    assert hasattr(_lasso_cd_rows, "_cache")


def _warned_here(record):
    return record.filename == __file__


def test_warnings_point_at_the_users_line():
    X = sp.random(30, 20, density=0.3, random_state=0, format="csr")
    with pytest.warns(ConvergenceWarning) as rec:
        BatchRLSI(3, max_iter=2, tol=1e-12, random_state=0).fit_transform(X)
    assert all(_warned_here(r) for r in rec if r.category is ConvergenceWarning)
    with pytest.warns(ConvergenceWarning) as rec:
        make_pipeline(BatchRLSI(3, max_iter=2, tol=1e-12, random_state=0)).fit_transform(X)
    assert all(_warned_here(r) for r in rec if r.category is ConvergenceWarning)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        BatchRLSI(4, lambda1=1e6, max_iter=3, random_state=0).fit_transform(X)
    dead = [r for r in rec if r.category is DeadTopicsWarning]
    assert dead and all(_warned_here(r) for r in dead)


def test_every_classifier_has_score():
    X = sp.csr_matrix(np.kron(np.eye(2), np.ones((4, 5))) + 0.01)
    y = np.array(["a"] * 4 + ["b"] * 4)
    model = GroupRLSI(1, 1, lambda1=0.001, max_iter=5, random_state=0).fit(X, y)
    assert model.score(X, y) == pytest.approx(np.mean(model.predict(X) == y))


def test_fit_without_model_options_builds_the_estimators_for_reading():
    """`rlsi fit` with no λ or online option gives the estimators' defaults but for λ1 and λ2, which are
    READING's (topics a person reads; the estimators' own serve a pipeline): batch, online, group."""
    from rlsi.cli._common import batch_model_from_args
    from rlsi.cli._online import online_model_from_args
    from rlsi.cli.group import group_model_from_args
    from rlsi.models import OnlineRLSI
    from rlsi.models.regularization import READING

    fit = _subparsers(build_parser())[0].choices["fit"]
    args = fit.parse_args(["corpus.jsonl.gz", "-o", "m"])
    compare = ("lambda1", "lambda2", "lambda1_scale", "batch_size", "rho", "n_inner", "n_passes")
    for built, reference in ((batch_model_from_args(args, True), BatchRLSI(**READING)),
                             (online_model_from_args(args, quiet=True), OnlineRLSI(**READING))):
        got, want = built.get_params(), reference.get_params()
        assert {k: got[k] for k in compare if k in want} == {k: want[k] for k in compare if k in want}
    args = fit.parse_args(["corpus.jsonl.gz", "-o", "m", "--model", "grlsi"])
    group = group_model_from_args(args, True)
    assert (group.lambda1, group.lambda2) == (GroupRLSI().lambda1, GroupRLSI().lambda2)
