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


def test_the_dask_placement_keeps_the_local_parameters_and_refuses_what_it_cannot_run():
    from rlsi.cli._dask import dask_placement
    from rlsi.models import BatchRLSI, OnlineRLSI

    args = argparse.Namespace(checkpoint_dir=None, resume_checkpoint=False)
    batch, unit = dask_placement(BatchRLSI(3, lambda1=0.2, random_state=1), None, args)
    assert (type(batch).__name__, unit, batch.lambda1, batch.random_state) == ("DaskRLSI", "iteration", 0.2, 1)
    online, unit = dask_placement(OnlineRLSI(3, batch_size=7), None, args)
    assert (type(online).__name__, unit, online.batch_size) == ("DaskOnlineRLSI", "mini-batch", 7)
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
