"""The command speaks in one voice: usage errors, warnings and interruptions each one line; a fit that
learned nothing is refused; a replaced model is announced; bars say no false time left; TQDM_DISABLE is
honoured by every command that shows progress."""

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rlsi
from rlsi import _progress
from rlsi.cli.main import guarded, interrupted, main
from cli_runner import run_verbose as run

DOCS = [("Heart and arteries", "the heart pumps blood through arteries and veins"),
        ("Blood pressure", "blood pressure in arteries rises with heart disease and cardiac strain"),
        ("Cardiac surgery", "cardiac surgery repairs the heart valves and arteries"),
        ("The lens", "the lens of the eye focuses light on the retina"),
        ("Cataract", "cataract clouds the lens and blurs vision of the eye"),
        ("Retina", "retina damage and vision loss in the eye")]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for i, (title, text) in enumerate(DOCS * 3):
            f.write(json.dumps({"id": f"d{i}", "title": title, "text": text, "label": "heart" if i % 6 < 3 else "eye",
                                "date": f"2001-0{1 + i % 3}-01", "split": "train" if i % 3 else "test"}) + "\n")
    return path


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(Path(rlsi.__file__).parents[1]),
                                                                  os.environ.get("PYTHONPATH")) if p))


# ------------------------------------------------------------------------------------------ usage errors
@pytest.mark.parametrize("argv, fragment", [
    (["fit", "c.jsonl", "-k", "x", "-o", "m"], "argument -k/--topics: 'x' is not an integer"),
    (["fit", "c.jsonl", "--lamda1", "1", "-o", "m"], "did you mean --lambda1"),
    (["fti"], "did you mean fit?"),
    (["fit", "c.jsonl", "--device", "gpu", "-o", "m"], "did you mean cuda?"),
    (["fit", "c.jsonl", "--device", "CUDA:1", "-o", "m"], "did you mean cuda (the card is chosen with CUDA_VISIBLE"),
])
def test_a_usage_error_is_one_line_that_names_the_help(capsys, argv, fragment):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith("rlsi: error: ") and err.count("\n") == 1, err
    assert fragment in err and "--help')" in err and "usage:" not in err


def test_device_host_and_numba_mean_the_cpu(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "c.jsonl", "--device", "host", "-o", "m"])
    assert "did you mean cpu?" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ warnings
def test_warnings_are_one_line_each(tmp_path, corpus, capsys):
    status, _, err = run(capsys, "fit", corpus, "-k", 2, "--max-iter", 2, "--tol", 1e-12, "-o", tmp_path / "m")
    assert status == 0
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if "warning" in ln.lower()]
    assert lines and all(ln.startswith("rlsi: warning: ") for ln in lines), err
    assert "ConvergenceWarning" not in err and "warnings.warn" not in err and "sys.exit" not in err


# ------------------------------------------------------------------------------------------ results
def test_a_fit_with_every_topic_empty_is_refused_with_the_lambda1_to_try(tmp_path, corpus, capsys):
    import re

    status, _, err = run(capsys, "-q", "fit", corpus, "-k", 2, "--lambda1", 1000, "-o", tmp_path / "m")
    assert status == 2 and "rlsi: error: all 2 topics of the fit are empty" in err and not (tmp_path / "m").exists()
    advised = re.search(r"try --lambda1 ([0-9.e+-]+),", err).group(1)
    status, _, err = run(capsys, "-q", "fit", corpus, "-k", 2, "--lambda1", advised, "-o", tmp_path / "m")
    assert status == 0, err  # the value it named gives topics


def test_replacing_a_model_folder_says_so_once(tmp_path, corpus, capsys):
    assert run(capsys, "-q", "fit", corpus, "-k", 2, "-o", tmp_path / "m")[0] == 0
    status, out, err = run(capsys, "fit", corpus, "-k", 2, "-o", tmp_path / "m")
    assert status == 0 and err.count(f"rlsi: note: {tmp_path / 'm'} holds a model; this fit replaces it") == 1
    assert run(capsys, "-q", "search", tmp_path / "m", "heart", "--corpus", corpus, "--save-index")[0] == 0
    status, _, err = run(capsys, "fit-stc", corpus, "-k", 2, "--max-iter", 1, "--dictionary-init", "documents",
                         "-o", tmp_path / "m")
    assert status == 0 and "holds a model and its search index; this fit replaces it" in err
    status, _, err = run(capsys, "-q", "fit", corpus, "-k", 2, "-o", tmp_path / "m")
    assert "note" not in err  # -q: quiet


def test_search_shows_titles_and_snippets_with_the_corpus(tmp_path, corpus, capsys):
    assert run(capsys, "-q", "fit", corpus, "-k", 2, "-o", tmp_path / "m")[0] == 0
    status, out, _ = run(capsys, "-q", "search", tmp_path / "m", "cataract of the lens", "-k", 2, "--corpus", corpus)
    lines = out.splitlines()
    assert status == 0 and lines[1].split()[1] in {f"d{i}" for i in range(len(DOCS) * 3)}
    assert lines[2].strip() in {t for t, _ in DOCS} and "lens" in lines[3]


def test_group_topics_list_the_shared_block_first_numbered_once(tmp_path, corpus, capsys):
    status, _, err = run(capsys, "-q", "fit", corpus, "--model", "grlsi", "--shared-topics", 2, "--class-topics", 2,
                         "--lambda1", 0.01, "-o", tmp_path / "g")
    assert status == 0, err
    status, out, _ = run(capsys, "topics", tmp_path / "g")
    blocks = [ln for ln in out.splitlines() if ln.startswith("== ")]
    assert blocks[0].startswith("== shared: 2 topics (T1-T2)") and len(blocks) == 3
    numbers = [int(ln.split()[0][1:]) for ln in out.splitlines() if ln[:1] == "T" and ln.split()[0][1:].isdigit()]
    assert numbers == list(range(1, 7))
    status, out, _ = run(capsys, "topics", tmp_path / "g", "--json")
    groups = json.loads(out)["groups"]
    assert list(groups)[0] == "shared" and [t["index"] for g in groups.values() for t in g["topics"]] == list(range(6))


# ------------------------------------------------------------------------------------------ progress
def test_a_bar_over_iterations_that_stop_at_convergence_shows_no_time_left():
    out = io.StringIO()
    bar = _progress.progress_bar(100, "BatchRLSI", file=out, mininterval=0, bound=True, disable=False)
    for _ in range(3):
        bar.update(1)
    text = str(bar)
    bar.close()
    assert "iteration 3 of at most 100" in text and "<" not in text and "%" not in text


def test_a_disabled_bar_counts_like_any_other(tmp_path):
    code = ("from rlsi import _progress\n"
            "bar = _progress.progress_bar(10, 'fit', bound=True)\n"
            "bar.update(1); bar.update(1); bar.set_postfix(objective=1.0); bar.close()\n"
            "print(bar.disable)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(_env(), TQDM_DISABLE="1"))
    assert proc.returncode == 0 and proc.stdout.split() == ["True"], proc.stderr


PROGRESS_COMMANDS = """
import json, sys
from rlsi.cli.main import main
corpus, tmp = sys.argv[1], sys.argv[2]
runs = [["fit", corpus, "-k", "2", "-o", f"{tmp}/m"],
        ["fit", corpus, "-k", "2", "--online", "--batch-size", "5", "-o", f"{tmp}/o"],
        ["fit", corpus, "--resume", f"{tmp}/o"],
        ["fit", corpus, "--model", "grlsi", "--shared-topics", "1", "--class-topics", "1", "--lambda1", "0.01",
         "-o", f"{tmp}/g"],
        ["fit-stc", corpus, "-k", "2", "--max-iter", "2", "--dictionary-init", "documents", "-o", f"{tmp}/s"],
        ["fit-stc", corpus, "--model", "ostc", "-k", "2", "--batch-size", "6", "-o", f"{tmp}/os"],
        ["transform", f"{tmp}/m", corpus, "-o", f"{tmp}/w.tsv"],
        ["search", f"{tmp}/m", "heart", "--corpus", corpus, "--save-index"],
        ["track", corpus, "--date-field", "date", "-k", "2", "--batch-size", "4", "-o", f"{tmp}/r"],
        ["synth", "--docs", "200", "--terms", "300", "--topics", "3", "--topic-vocab", "50", "-o", f"{tmp}/x"],
        ["ingest", corpus, "-o", f"{tmp}/i"],
        ["fit", "--matrix", f"{tmp}/x", "-k", "2", "-o", f"{tmp}/mx"],
        ["index", f"{tmp}/mx", "--matrix", f"{tmp}/x"],
        ["demo", "-k", "3"]]
print(json.dumps([main(argv) for argv in runs]))
"""


def test_every_progress_bearing_command_runs_under_tqdm_disable(tmp_path, corpus):
    """TQDM_DISABLE=1 (tqdm's own switch, common in CI and notebooks) turns the bars off; the commands run."""
    proc = subprocess.run([sys.executable, "-c", PROGRESS_COMMANDS, str(corpus), str(tmp_path)], capture_output=True,
                          text=True, timeout=600, env=dict(_env(), TQDM_DISABLE="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [0] * 14, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "it/s" not in proc.stderr


# ------------------------------------------------------------------------------------------ Ctrl-C
def test_an_interruption_inside_a_numba_function_is_ctrl_c():
    """numba reports a Ctrl-C that lands in a compiled function as a SystemError caused by the
    KeyboardInterrupt: it is still an interruption (one line, status 130)."""
    from numba import njit

    @njit(cache=False)
    def spin(n):
        s, a = 0.0, np.zeros(4)
        for i in range(n):
            s += (i % 7) * 0.5
            if i % 1000000 == 0:
                a = np.zeros(4)
        return s, a

    spin(10)

    def interrupt(*_):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        try:
            spin(10**10)
        except BaseException as exc:  # noqa: B036 - what numba raises is the point
            caught = exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    assert interrupted(caught)
    assert not interrupted(ValueError("x")) and not interrupted(SystemError("x"))


def test_guarded_answers_every_interruption_with_130(capsys):
    def fail():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("spin() returned a result with an exception set") from exc

    assert guarded(fail) == 130 and capsys.readouterr().err == "rlsi: interrupted\n"
    with pytest.raises(ValueError):
        guarded(lambda: (_ for _ in ()).throw(ValueError("a bug")))


@pytest.mark.slow
def test_ctrl_c_at_any_moment_of_a_fit_is_one_line_and_130(tmp_path):
    """SIGINT at several moments of `rlsi fit --matrix` once rlsi's entry point runs (the imports of numba and
    the rest, loading, the memory check, the kernels): status 130 and `rlsi: interrupted`, nothing written,
    or a finished fit when the signal came after it. (Before that the interpreter is still starting: a .pth
    file of the environment, say, is Python's own start-up.)"""
    subprocess.run([sys.executable, "-m", "rlsi", "-q", "synth", "--docs", "3000", "--terms", "4000", "--topics", "20",
                    "--topic-vocab", "300", "-o", str(tmp_path / "x")], check=True, env=_env(), timeout=300)
    started = tmp_path / "started"
    entry = ("import sys; from pathlib import Path; from rlsi.cli.main import run; Path(sys.argv[1]).touch(); "
             "run(sys.argv[2:])")
    for delay in (0.0, 0.2, 0.5, 1.0, 2.0, 3.5):
        started.unlink(missing_ok=True)
        out = tmp_path / f"m{delay}"
        proc = subprocess.Popen([sys.executable, "-c", entry, str(started), "-q", "fit", "--matrix", str(tmp_path / "x"),
                                 "-k", "50", "--lambda1", "0.001", "--lambda2", "1e-3", "-o", str(out)],
                                stderr=subprocess.PIPE, text=True, env=_env())
        while not started.exists() and proc.poll() is None:
            time.sleep(0.01)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=300)
        if proc.returncode == 0:  # finished before the signal
            continue
        assert proc.returncode == 130 and err.strip() == "rlsi: interrupted", (delay, proc.returncode, err[-2000:])
        assert not out.exists()


def test_python_dash_m_rlsi_is_the_command(tmp_path, corpus):
    proc = subprocess.run([sys.executable, "-m", "rlsi", "fit", str(corpus), "-k", "x", "-o", str(tmp_path / "m")],
                          capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 2 and proc.stderr.startswith("rlsi: error: argument -k/--topics")
    assert proc.stderr.count("\n") == 1
    proc = subprocess.run([sys.executable, "-m", "rlsi", "-q", "fit", str(corpus), "-k", "2", "-o", str(tmp_path / "m")],
                          capture_output=True, text=True, timeout=300, env=_env())
    assert proc.returncode == 0 and (tmp_path / "m" / "manifest.json").is_file(), proc.stderr


def test_the_memory_check_refuses_up_front_and_can_be_skipped(tmp_path, corpus, capsys, caplog):
    status, _, err = run(capsys, "-q", "fit", corpus, "-k", 2, "--memory-limit", "1M", "-o", tmp_path / "m")
    assert status == 2 and "more than the 1.0 MB of --memory-limit" in err and "a limit well above" in err
    assert not (tmp_path / "m").exists()
    status, _, err = run(capsys, "-q", "fit", corpus, "-k", 2, "--no-memory-check", "-o", tmp_path / "m")
    assert status == 0, err
    status, _, err = run(capsys, "-q", "fit", corpus, "-k", 2, "--no-memory-check", "--memory-limit", "1G",
                         "-o", tmp_path / "m")
    assert status == 2 and "contradict" in err
    import logging

    caplog.set_level(logging.INFO)  # what -v asks for (the test session owns the logging set-up)
    status, _, err = run(capsys, "-v", "fit", corpus, "-k", 2, "-o", tmp_path / "m")
    assert status == 0 and "memory estimate of the fit" in caplog.text
