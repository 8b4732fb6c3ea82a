"""Whole-or-nothing output (rlsi.io.atomic): crash safety of replace_dir, atomic files, early checks."""

import os

import numpy as np
import pytest

from rlsi import io
from rlsi.errors import RLSIError
from rlsi.io import atomic
from rlsi.models import BatchRLSI

from conftest import planted_corpus


@pytest.fixture(scope="module")
def two_models():
    X = planted_corpus(n_docs=60)
    old = BatchRLSI(3, lambda1=1.0, random_state=0, max_iter=5).fit(X)
    new = BatchRLSI(3, lambda1=1.0, random_state=1, max_iter=5).fit(X)
    return old, new


def _which(path, two_models):
    """'old' or 'new': the model visible at ``path`` (it must load)."""
    loaded = io.load(path)["model"]
    old, new = two_models
    for name, m in (("old", old), ("new", new)):
        if (loaded.components_ != m.components_).nnz == 0:
            return name
    raise AssertionError("the visible model is neither the old nor the new one")


def _hidden(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("swap", [True, False], ids=["exchange", "two-renames"])
def test_kill_between_any_two_steps_leaves_a_loadable_model(tmp_path, two_models, monkeypatch, swap):
    """A process killed (os._exit: no cleanup runs) before each file-system step of a save over an
    existing model leaves a complete model visible: the old one, or the new one once it is in place."""
    old, new = two_models
    path = tmp_path / "m"
    io.save(path, model=old)
    if not swap:
        monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    elif not atomic._exchange(tmp_path / "m", tmp_path / "m"):  # probe: this file system cannot swap
        pytest.skip("this system or file system has no renameat2(RENAME_EXCHANGE)")
    seen, step = set(), 0
    while True:
        pid = os.fork()
        if pid == 0:  # child: die just before file-system step number `step`
            counter = [0]

            def crash_at(fn):
                def wrapped(*args):
                    if counter[0] == step:
                        os._exit(17)
                    counter[0] += 1
                    return fn(*args)
                return wrapped

            for name in ("_rename", "_exchange", "_rmtree"):
                setattr(atomic, name, crash_at(getattr(atomic, name)))
            try:
                io.save(path, model=new)
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        assert code in (0, 17)
        seen.add(_which(path, two_models))  # the next open recovers if needed, then loads
        # restore the old model for the next step
        io.save(path, model=old)
        assert _which(path, two_models) == "old" and _hidden(tmp_path) == []  # leftovers of the dead writer removed
        if code == 0:
            break
        step += 1
    assert step >= 2 and seen == {"old", "new"}


def test_open_after_kill_between_the_two_renames_recovers(tmp_path, two_models):
    """The state a kill between the two renames leaves (no ``m``, only ``.m.old-*`` and ``.m.tmp-*``)."""
    old, new = two_models
    io.save(tmp_path / "m", model=old)
    io.save(tmp_path / "new", model=new)
    os.rename(tmp_path / "m", tmp_path / ".m.old-1234abcd")
    os.rename(tmp_path / "new", tmp_path / ".m.tmp-5678abcd")
    assert _which(tmp_path / "m", two_models) == "old"
    assert not (tmp_path / ".m.old-1234abcd").exists()
    io.save(tmp_path / "m", model=new)  # a later save works as usual
    assert _which(tmp_path / "m", two_models) == "new"


@pytest.mark.parametrize("fail_at", [0, 1, 2])
def test_failing_step_keeps_the_old_model_and_leaves_nothing(tmp_path, two_models, monkeypatch, fail_at):
    old, new = two_models
    io.save(tmp_path / "m", model=old)
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    calls = [0]
    real = atomic._rename

    def failing(src, dst):
        if calls[0] == fail_at:
            raise OSError(28, "No space left on device")
        calls[0] += 1
        return real(src, dst)

    monkeypatch.setattr(atomic, "_rename", failing)
    if fail_at < 2:
        with pytest.raises(RLSIError, match="cannot write .*no space left on the device") as info:
            io.save(tmp_path / "m", model=new)
        assert "\n" not in str(info.value)
        assert _which(tmp_path / "m", two_models) == "old"
    else:  # two renames done: the new model is in place (only the clean-up would follow)
        io.save(tmp_path / "m", model=new)
        assert _which(tmp_path / "m", two_models) == "new"
    assert _hidden(tmp_path) == []


def test_interrupted_save_keeps_old_model(tmp_path, two_models, monkeypatch):
    old, new = two_models
    io.save(tmp_path / "m", model=old)

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(type(new), "_to_state", interrupted)
    with pytest.raises(KeyboardInterrupt):
        io.save(tmp_path / "m", model=new)
    assert _which(tmp_path / "m", two_models) == "old" and _hidden(tmp_path) == []


def test_ctrl_c_between_the_two_renames_takes_effect_after_them(tmp_path, two_models, monkeypatch):
    """On a file system without an atomic swap, Ctrl-C that arrives right after the old folder is renamed
    away waits for the new one to be in place: the folder is never left hidden (real SIGINT to this process)."""
    import signal

    old, new = two_models
    io.save(tmp_path / "m", model=old)
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    real = atomic._rename
    seen = []

    def interrupted_after_first(src, dst):
        real(src, dst)
        if not seen:
            seen.append(dst)
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C between the two renames

    monkeypatch.setattr(atomic, "_rename", interrupted_after_first)
    with pytest.raises(KeyboardInterrupt):
        io.save(tmp_path / "m", model=new)
    assert seen and ".old-" in str(seen[0])  # the interruption came between the two renames
    assert _which(tmp_path / "m", two_models) == "new"  # both renames done before it took effect
    monkeypatch.setattr(atomic, "_rename", real)
    io.save(tmp_path / "m", model=old)  # the next save removes what the interrupted one left
    assert _which(tmp_path / "m", two_models) == "old" and _hidden(tmp_path) == []


def test_read_only_model_folder_is_refused_before_writing(tmp_path, two_models, monkeypatch):
    old, new = two_models
    io.save(tmp_path / "m", model=old)
    real = os.access
    monkeypatch.setattr(atomic.os, "access",
                        lambda p, mode: False if os.path.abspath(p) == str(tmp_path / "m") else real(p, mode))
    with pytest.raises(RLSIError, match="read-only"):
        io.save(tmp_path / "m", model=new)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no hidden .m.old-* or .m.tmp-*


def test_remove_tree_handles_read_only_folders(tmp_path):
    d = tmp_path / ".x.old-1"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "f.npy").write_bytes(b"1")
    os.chmod(d / "sub", 0o555)
    os.chmod(d, 0o555)
    atomic._remove_tree(d)
    assert not d.exists()


def test_atomic_file_is_whole_or_absent(tmp_path):
    target = tmp_path / "out.tsv"
    io.write_text(target, "old\n")
    with pytest.raises(ZeroDivisionError):
        with io.atomic_file(target) as handle:
            handle.write("half")
            1 / 0
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]
    io.save_npy(tmp_path / "a.npy", np.arange(3))
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.arange(3))
    io.write_text(tmp_path / "z.txt.gz", "zipped\n")
    import gzip

    assert gzip.open(tmp_path / "z.txt.gz", "rt").read() == "zipped\n"


@pytest.mark.parametrize("case", ["under_file", "parent_unwritable", "is_folder", "not_regular"])
def test_check_output_file(tmp_path, monkeypatch, case):
    (tmp_path / "afile").write_text("x")
    target = {"under_file": tmp_path / "afile" / "sub" / "out.tsv", "parent_unwritable": tmp_path / "ro" / "o.tsv",
              "is_folder": tmp_path, "not_regular": tmp_path / "fifo"}[case]
    if case == "parent_unwritable":
        (tmp_path / "ro").mkdir()
        monkeypatch.setattr(atomic.os, "access", lambda p, mode: os.path.basename(p) != "ro")
    if case == "not_regular":
        os.mkfifo(target)
    message = {"under_file": "afile is not a folder", "parent_unwritable": "is not writable",
               "is_folder": "is a folder", "not_regular": "not a regular file"}[case]
    with pytest.raises(RLSIError, match=message):
        io.check_output_file(target)
