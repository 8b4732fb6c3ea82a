"""``rlsi serve`` as a process on 127.0.0.1: it announces its address, stops cleanly on SIGTERM and Ctrl-C
with every acknowledged document committed, loses none to ``kill -9``, and answers a busy port, a second
writer, a missing serve extra and its option mistakes with one line."""

import json
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest
from serve.serve_helpers import PATIENCE, REPO, ServerProcess, env

from rlsi.retrieval.live import LiveIndex

pytest.importorskip("uvicorn", reason="the serve extra is not installed (pip install '.[test]')")


def _call(url, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=PATIENCE) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _rlsi(*args):
    return subprocess.run([sys.executable, "-m", "rlsi", *map(str, args)], cwd=REPO, env=env(), capture_output=True,
                          text=True, timeout=PATIENCE)


@pytest.mark.parametrize("sig, name", [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "Ctrl-C")])
def test_a_signal_stops_it_cleanly_with_the_documents_committed(index_dir, sig, name):
    with ServerProcess(index_dir) as server:
        status, answer = _call(server.url + "documents", "POST", [{"id": "s1", "text": "platypus"}])
        assert status == 200
        assert _call(server.url + "search?q=platypus")[1]["hits"][0]["doc_id"] == "s1"
        code, err = server.stop(sig)
    assert code == 0, err
    assert f"stopped by {name}: the index is closed at generation {answer['generation']} (97 documents)" in err
    assert "Traceback" not in err
    with LiveIndex.open(index_dir) as index:  # the writer lock is free, the document there
        assert "s1" in index
        index.commit()


def test_kill_9_loses_no_acknowledged_document(index_dir):
    acknowledged, stop = [], threading.Event()
    with ServerProcess(index_dir) as server:
        def feed():
            for i in range(10_000):
                if stop.is_set():
                    return
                try:
                    status, _ = _call(server.url + "documents", "POST", [{"id": f"k{i}", "text": f"wombat {i}"}])
                except OSError:  # the server is gone
                    return
                if status == 200:
                    acknowledged.append(f"k{i}")

        thread = threading.Thread(target=feed)
        thread.start()
        while len(acknowledged) < 5 and thread.is_alive():
            thread.join(0.05)
        server.kill()
        stop.set()
        thread.join()
    assert len(acknowledged) >= 5
    with ServerProcess(index_dir) as again:  # the next start takes the lock the dead one held
        for doc_id in acknowledged:
            assert _call(again.url + f"documents/{doc_id}")[0] == 200, doc_id
        assert _call(again.url + "health")[1]["documents"] >= 96 + len(acknowledged)
        assert _call(again.url + "documents", "POST", [{"id": "k0", "text": "retried"}])[0] == 200
        again.stop()


def test_a_second_server_on_the_same_index_is_refused_in_one_line(index_dir):
    with ServerProcess(index_dir) as first:
        second = _rlsi("serve", index_dir, "--port", "0")
        first.stop()
    assert second.returncode == 2 and second.stdout == ""
    lines = second.stderr.strip().splitlines()
    assert lines[-1].startswith("rlsi: error: ") and "another writer (process" in lines[-1]


def test_a_busy_port_and_option_mistakes_are_one_line(index_dir, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = _rlsi("serve", index_dir, "--port", port)
    assert busy.returncode == 2
    assert busy.stderr.strip().splitlines()[-1].startswith(
        f"rlsi: error: cannot listen on 127.0.0.1:{port}: Address already in use")
    empty = tmp_path / "token"
    empty.write_text("\n")
    for args, words in ((["--token-file", empty], "must hold one token"),
                        (["--token-file", tmp_path / "none"], "cannot read the token file"),
                        (["--read-only", "--token-file", empty], "needs no token"),
                        (["--port", "70000"], "65535")):
        result = _rlsi("serve", index_dir, *args)
        assert result.returncode == 2 and words in result.stderr, (args, result.stderr)
        assert result.stderr.count("\n") <= 2 and "Traceback" not in result.stderr


def test_another_host_is_warned_about(tmp_path):
    result = _rlsi("serve", "--host", "0.0.0.0", "--read-only")  # refused before anything listens
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("rlsi: warning: listening on 0.0.0.0, beyond this machine: anyone")
    assert lines[-1] == "rlsi: error: --read-only needs a folder to serve (the demo is built for this run)"


def test_without_the_serve_extra_it_says_what_to_install(tmp_path):
    code = ("import sys; sys.modules['uvicorn'] = None\n"
            "from rlsi.cli.main import run; run(['serve', 'anything'])")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env(), capture_output=True, text=True,
                            timeout=PATIENCE)
    assert result.returncode == 2
    assert result.stderr.strip() == ('rlsi: error: rlsi serve needs FastAPI and uvicorn (uvicorn is missing): '
                                     'pip install "rlsi[serve]"')


def test_a_token_file_protects_the_writes(index_dir, tmp_path):
    token = tmp_path / "token"
    token.write_text("tok-123456\n")
    token.chmod(0o600)
    with ServerProcess(index_dir, "--token-file", token) as server:
        assert _call(server.url + "documents", "POST", [{"id": "t", "text": "x"}])[0] == 401
        request = urllib.request.Request(server.url + "documents", data=b'[{"id": "t", "text": "x"}]', method="POST",
                                         headers={"content-type": "application/json",
                                                  "authorization": "Bearer tok-123456"})
        with urllib.request.urlopen(request, timeout=PATIENCE) as answer:
            assert answer.status == 200
        code, err = server.stop()
    assert code == 0 and "tok-123456" not in err
