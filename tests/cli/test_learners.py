"""The CLI's learner registry (rlsi.cli.learners): choices, refusals and summaries derive from it; the CLI's
modules import each other without a loop."""

import argparse
import ast
from pathlib import Path

import pytest

import rlsi.cli
from rlsi.cli.learners import LEARNERS, Learner, check_modes, fit_modes, get_learner, learners, register
from rlsi.cli.main import build_parser, main
from rlsi.errors import RLSIError


def _choices(command):
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    model = next(a for a in sub.choices[command]._actions if a.dest == "model")
    return model.choices, model.help


@pytest.mark.parametrize("command", ["fit", "fit-stc"])
def test_model_choices_are_the_registry_keys(command):
    choices, help_text = _choices(command)
    assert sorted(choices) == sorted(learners(command)) and len(choices) >= 5
    if command == "fit":
        assert all(f"{name}:" in help_text for name in choices)


def test_every_learner_builds_its_estimator_from_the_default_options():
    for command in ("fit", "fit-stc"):
        parser = build_parser()
        for name, learner in learners(command).items():
            args = parser.parse_args([command, "corpus.jsonl", "-o", "out", "--model", name])
            model = learner.build(args)
            assert hasattr(model, "fit") and hasattr(model, "transform"), name
    rlsi = get_learner("rlsi")
    args = build_parser().parse_args(["fit", "c.jsonl", "-o", "out", "--online"])
    assert type(rlsi.build(args)).__name__ == "OnlineRLSI"


def test_unknown_learner_and_unsupported_modes_name_the_registry():
    with pytest.raises(RLSIError, match="choose among rlsi, grlsi"):
        get_learner("lda")
    parser = build_parser()
    args = parser.parse_args(["fit", "c.jsonl", "-o", "out", "--model", "grlsi", "--online"])
    assert fit_modes(args) == {"online"}
    able = [n for n, lrn in learners("fit").items() if "online" in lrn.modes]
    with pytest.raises(RLSIError, match=f"--online fits --model {' / '.join(able)}"):
        check_modes(get_learner("grlsi"), fit_modes(args))
    args = parser.parse_args(["fit", "c.jsonl", "-o", "out", "--backend", "dask", "--online"])
    assert fit_modes(args) == {"online", "dask"}
    check_modes(get_learner("rlsi"), fit_modes(args))


def test_a_learner_is_registered_once():
    first = next(iter(LEARNERS.values()))
    with pytest.raises(ValueError, match="twice"):
        register(Learner(first.command, first.name, "again", first.build))


def test_a_refused_mode_is_one_line_before_any_work(tmp_path, capsys):
    status = main(["-q", "fit", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "m"), "--model", "gnmf",
                   "--backend", "dask"])
    err = capsys.readouterr().err
    assert status == 2 and "--model gnmf does not fit with --backend dask" in err and err.count("\n") == 1


def _imports(path, package):
    """The rlsi.cli modules a module of rlsi.cli imports (module level and inside functions)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [a.name for a in node.names]
            out.update(f"{package}.{n}" for n in names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(package + "."):
            out.add(node.module)
    return out


def test_the_cli_modules_import_each_other_without_a_loop():
    folder = Path(rlsi.cli.__file__).parent
    modules = {f"rlsi.cli.{p.stem}": p for p in folder.glob("*.py") if p.stem != "__init__"}
    graph = {m: _imports(p, "rlsi.cli") & set(modules) for m, p in modules.items()}
    state = {}

    def visit(m, path):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", " -> ".join([*path, m])
        state[m] = "open"
        for n in sorted(graph[m]):
            visit(n, [*path, m])
        state[m] = "done"

    for m in sorted(graph):
        visit(m, [])
    assert "rlsi.cli.fit" not in graph["rlsi.cli.scale"]


def test_the_dask_placement_keeps_the_local_estimator_and_refuses_what_it_cannot_run():
    pytest.importorskip("distributed")
    from rlsi.cli._dask import dask_placement
    from rlsi.distributed.placement import DaskPlacement
    from rlsi.models import BatchRLSI, OnlineRLSI

    args = argparse.Namespace(checkpoint_dir="ck", resume_checkpoint=True)
    batch, unit = dask_placement(BatchRLSI(3, lambda1=0.2, random_state=1, n_jobs=2), None, args)
    assert (type(batch).__name__, unit, batch.lambda1, batch.random_state) == ("BatchRLSI", "iteration", 0.2, 1)
    assert isinstance(batch.placement, DaskPlacement) and batch.placement.task_threads == 2
    assert (batch.placement.checkpoint_dir, batch.placement.resume) == ("ck", True)
    args = argparse.Namespace(checkpoint_dir=None, resume_checkpoint=False)
    online, unit = dask_placement(OnlineRLSI(3, batch_size=7), None, args)
    assert (type(online).__name__, unit, online.batch_size) == ("OnlineRLSI", "mini-batch", 7)
    assert isinstance(online.placement, DaskPlacement)
    with pytest.raises(RLSIError, match="does not take device"):
        dask_placement(BatchRLSI(3, device="cuda"), None, args)
    with pytest.raises(RLSIError, match="apply to the batch fit"):
        dask_placement(OnlineRLSI(3), None, argparse.Namespace(checkpoint_dir="ck", resume_checkpoint=False))


@pytest.mark.parametrize("argv, words", [(["--online", "--max-iter", "50"], "applies to the batch fit"),
                                         (["--online", "--terms-per-topic", "5"], "applies to the batch fit"),
                                         (["--batch-size", "64"], "applies with --online"),
                                         (["--n-inner", "3"], "applies with --online"),
                                         (["--shared-topics", "3"], "grlsi / gnmf")])
def test_fit_refuses_an_option_the_learner_would_ignore(tmp_path, capsys, argv, words):
    (tmp_path / "c.jsonl").write_text("".join(f'{{"text": "heart blood lens eye {i}"}}\n' for i in range(10)))
    status = main(["-q", "fit", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "m"), *argv])
    err = capsys.readouterr().err
    assert status == 2 and words in err and "would be ignored" in err and err.count("\n") == 1, err
    assert not (tmp_path / "m").exists()


# ------------------------------------------------------------------ the STC family under rlsi fit
def _build(argv):
    args = build_parser().parse_args(argv)
    return get_learner(args.model, args.command).build(args)


def test_rlsi_fit_builds_every_stc_learner_as_fit_stc_does():
    """``rlsi fit --model NAME`` and ``rlsi fit-stc --model NAME`` build the same estimator; the options rlsi fit
    shares with RLSI (-k, --rho, --max-iter, --batch-size, --seed) keep the STC defaults where not written and
    count where written, even at the RLSI default (-k 20, --rho 0)."""
    for name in ("stc", "cstc", "ostc", "medstc", "omedstc"):
        via_fit = _build(["fit", "c.jsonl", "-o", "out", "--model", name])
        via_alias = _build(["fit-stc", "c.jsonl", "-o", "out", "--model", name])
        assert type(via_fit) is type(via_alias) and via_fit.get_params() == via_alias.get_params(), name
    model = _build(["fit", "c.jsonl", "-o", "out", "--model", "stc"])
    assert model.n_components == 60 and model.rho == 0.01 and model.max_iter == 4
    model = _build(["fit", "c.jsonl", "-o", "out", "--model", "stc", "-k", "20", "--rho", "0", "--max-iter=100",
                    "--gam", "0.3", "--seed", "4"])
    assert (model.n_components, model.rho, model.max_iter, model.gamma, model.random_state) == (20, 0.0, 100, 0.3, 4)
    online = _build(["fit", "c.jsonl", "-o", "out", "--model", "ostc", "-k5", "--batch-size", "256"])
    assert (online.n_components, online.batch_size) == (5, 256)


def test_the_written_options_are_told_from_the_defaults():
    args = build_parser().parse_args(["fit", "c.jsonl", "-o", "out", "-k7", "--lambda1=0.1", "--max-it", "3",
                                      "--lambda2", "0.5"])
    assert args.given_options == {"topics", "lambda1", "max_iter", "lambda2", "output"}
    assert args.max_iter == 3 and args.lambda2 == 0.5


@pytest.mark.parametrize("argv, words", [
    (["--model", "stc", "--lambda1", "0.1"], "--model stc does not take --lambda1"),
    (["--model", "rlsi", "--gamma", "0.1"], "--model rlsi does not take --gamma"),
    (["--model", "ostc", "--online"], "--model ostc does not fit with --online"),
    (["--model", "ostc", "--max-iter", "3"], "--model ostc does not take --max-iter"),
    (["--model", "stc", "--delta", "3"], "--model stc does not take --delta"),
    (["--online", "--max-iter", "100"], "--model rlsi --online does not take --max-iter"),
])
def test_rlsi_fit_refuses_what_a_learner_would_ignore_in_one_line(tmp_path, capsys, argv, words):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "alpha beta"}\n')
    assert main(["fit", str(corpus), "-o", str(tmp_path / "m"), *argv]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and err[0].startswith("rlsi: error:")
    assert not (tmp_path / "m").exists()


def test_rlsi_fit_model_stc_is_the_fit_of_fit_stc(tmp_path):
    import json

    import numpy as np

    import rlsi.io

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(16)]
    with open(tmp_path / "c.jsonl", "w") as f:
        for i in range(60):
            text = " ".join(rng.choice(words[:8] if i % 2 else words[8:], 20))
            f.write(json.dumps({"text": text, "label": str(i % 2), "split": "train" if i < 45 else "test"}) + "\n")
    common = [str(tmp_path / "c.jsonl"), "-k", "3", "--max-iter", "2", "--dictionary-init", "documents",
              "--split-field", "split", "-q"]
    assert main(["fit", *common, "-o", str(tmp_path / "a"), "--model", "medstc"]) == 0
    assert main(["fit-stc", *common, "-o", str(tmp_path / "b"), "--model", "medstc"]) == 0
    a, b = rlsi.io.load(tmp_path / "a")["model"], rlsi.io.load(tmp_path / "b")["model"]
    assert type(a).__name__ == "MedSTC" and a.n_components == 3
    np.testing.assert_array_equal(a.components_, b.components_)
