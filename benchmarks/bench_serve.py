"""``rlsi serve`` under load, killed in the middle: concurrent clients mix searches and adds against a 20
Newsgroups live index for ``--seconds``; the server is killed with SIGKILL at ``--kill-at`` seconds and
started again at once on the same port; the clients retry while it is down. Afterwards every acknowledged
document must be found (``GET /documents/{id}``, its text as sent), once on the restarted server and once
more after a clean SIGTERM stop and a second restart.

Everything runs on 127.0.0.1. The index (not timed): a topic model (``BatchRLSI``, ``--k`` topics,
``--fit-iters`` iterations) fitted on every post, and a live index (``rlsi index --live``) of the posts
less the ``--pool`` held out for the clients to add; the server reads the indexed posts' texts with
``--corpus`` for titles and snippets. The server runs as ``rlsi serve`` sets it up (BLAS in one thread; its
thread pool runs the searches).

Clients: ``--clients`` asyncio tasks of one process (httpx, one connection each). Each loops: with
probability ``--add-share`` it POSTs 1-4 posts of its own share of the pool (new ids), else it searches 2-4
words drawn from a random post (top 10, the index's α). A request refused by a dead server (connection
refused or reset) is retried every 50 ms and counted as a retry; any answer other than 200 is an error. A
request's latency is that of the attempt answered; requests that spanned the kill are also reported whole.

Usage::

    PYTHONPATH=src python benchmarks/bench_serve.py --out benchmarks/results/serve.md
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.use_src()

RETRY_PAUSE = 0.05
REQUEST_TIMEOUT = 60.0
PATIENCE = 300  # seconds a start or a stop of the server may take before the run fails


# ---------------------------------------------------------------------------------------------- the index
def _posts():
    with gzip.open(harness.shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _joined(post):
    return "\n".join(v for v in (post.get("title"), post.get("text")) if isinstance(v, str) and v.strip())


def build(work, a):
    """The model folder made a live index of all posts but the pool; returns (indexed corpus file, pool,
    queries, facts)."""
    import rlsi.io
    from rlsi.models import BatchRLSI
    from rlsi.retrieval.live.maintain import build_live
    from rlsi.text import TfidfVectorizer

    posts = _posts()
    rng = np.random.default_rng(0)
    order = rng.permutation(len(posts))
    pool = [posts[i] for i in order[:a.pool]]
    indexed = [posts[i] for i in sorted(order[a.pool:])]
    texts = [_joined(p) for p in posts]
    harness.log(f"20 Newsgroups: {len(posts)} posts, {len(indexed)} indexed, {len(pool)} held out; fitting K={a.k}")
    vec = TfidfVectorizer()
    X = vec.fit_transform(texts)
    t = time.perf_counter()
    model = BatchRLSI(a.k, max_iter=a.fit_iters, random_state=0).fit(X)
    fit_s = time.perf_counter() - t
    tok = vec.build_tokenizer()
    queries = []
    while len(queries) < 2000:
        words = [w for w in tok(texts[int(rng.integers(len(texts)))]) if w in vec.vocabulary_]
        if len(words) >= 4:
            queries.append(" ".join(rng.choice(words, size=int(rng.integers(2, 5)), replace=False)))
    corpus = work / "indexed.jsonl"
    with open(corpus, "w", encoding="utf-8") as f:
        for p in indexed:
            f.write(json.dumps({"id": p["id"], "title": p.get("title"), "text": p.get("text")}) + "\n")
    folder = work / "index"
    rlsi.io.save(folder, model=model, vectorizer=vec)
    t = time.perf_counter()
    stats = build_live(folder, corpus=corpus)
    harness.log(f"live index: {stats['documents']} posts in {time.perf_counter() - t:.1f} s")
    return folder, corpus, pool, queries, {"posts": len(posts), "indexed": len(indexed), "pool": len(pool),
                                           "k": a.k, "fit_s": fit_s, "segments": len(stats["segments"])}


# ---------------------------------------------------------------------------------------------- the server
class Server:
    """``rlsi serve`` in a child process; ``start(port)`` returns once it announced its address."""

    def __init__(self, folder, corpus, log_path):
        self.folder, self.corpus, self.log_path = folder, corpus, log_path
        self.proc = None
        self.port = 0

    def start(self):
        env = harness.child_env()
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen([sys.executable, "-m", "rlsi", "serve", str(self.folder), "--corpus",
                                      str(self.corpus), "--port", str(self.port), "-q"], cwd=harness.ROOT, env=env,
                                     stdout=subprocess.PIPE, stderr=log, text=True)
        log.close()
        line = self.proc.stdout.readline()
        found = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
        if found is None:
            self.proc.kill()
            raise SystemExit(f"the server did not start: {line!r}; see {self.log_path}")
        self.port = int(found.group(1))
        return f"http://127.0.0.1:{self.port}/"

    def cpu_s(self):
        """CPU seconds (user + system) of the server process so far."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(PATIENCE)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(PATIENCE)


# ---------------------------------------------------------------------------------------------- the clients
class Tally:
    def __init__(self):
        self.latency = {"search": [], "add": []}
        self.spanning = {"search": [], "add": []}  # requests retried: their whole time
        self.retries = {"search": 0, "add": 0}
        self.errors = []
        self.acked = {}  # id -> text


async def _request(http, tally, op, method, path, end, **kw):
    start = time.perf_counter()
    retried = False
    while True:
        t = time.perf_counter()
        try:
            r = await http.request(method, path, **kw)
        except Exception as exc:  # noqa: BLE001 - the server is down (refused, reset) or too slow
            import httpx

            if isinstance(exc, httpx.TimeoutException) or time.monotonic() > end + PATIENCE:
                tally.errors.append(f"{op}: {type(exc).__name__}")
                return None
            tally.retries[op] += 1
            retried = True
            await asyncio.sleep(RETRY_PAUSE)
            continue
        if r.status_code != 200:
            tally.errors.append(f"{op}: {r.status_code} {r.text[:200]}")
            return None
        tally.latency[op].append(time.perf_counter() - t)
        if retried:
            tally.spanning[op].append(time.perf_counter() - start)
        return r


async def _client(i, url, pool, queries, tally, end, add_share):
    import httpx

    rng = np.random.default_rng(1000 + i)
    async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT,
                                 limits=httpx.Limits(max_connections=1)) as http:
        while time.monotonic() < end:
            if pool and rng.random() < add_share:
                n = int(rng.integers(1, 5))
                batch, pool[:] = pool[:n], pool[n:]
                docs = [{"id": p["id"], "title": p.get("title"), "text": p.get("text")} for p in batch]
                r = await _request(http, tally, "add", "POST", "documents", end, json=docs)
                if r is not None:
                    tally.acked.update((p["id"], _joined(p)) for p in batch)
            else:
                q = queries[int(rng.integers(len(queries)))]
                await _request(http, tally, "search", "GET", "search", end, params={"q": q, "k": 10})


async def _load(server, url, pool, queries, a):
    tally = Tally()
    start = time.monotonic()
    end = start + a.seconds
    shares = [pool[i::a.clients] for i in range(a.clients)]
    clients = [asyncio.create_task(_client(i, url, shares[i], queries, tally, end, a.add_share))
               for i in range(a.clients)]
    cpu0, server_cpu0 = os.times(), server.cpu_s()
    await asyncio.sleep(a.kill_at)
    before = len(tally.acked)
    server_cpu = server.cpu_s() - server_cpu0
    t = time.perf_counter()
    server.kill()
    harness.log(f"killed the server (SIGKILL) at {a.kill_at} s, {before} documents acknowledged")
    await asyncio.to_thread(server.start)
    restart_s = time.perf_counter() - t
    restarted_cpu = server.cpu_s()
    harness.log(f"restarted in {restart_s:.1f} s")
    await asyncio.gather(*clients)
    server_cpu += server.cpu_s() - restarted_cpu
    cpu1 = os.times()
    return tally, {"elapsed_s": time.monotonic() - start, "acked_before_kill": before, "restart_s": restart_s,
                   "server_cpu_s": server_cpu, "clients_cpu_s": cpu1.user + cpu1.system - cpu0.user - cpu0.system}


async def _one_client(url, folder, queries, seconds):
    """One client alone, query by query in turn: the search in process (``LiveIndex.search`` on the same
    folder, opened read-only here, one numba and one BLAS thread as the server runs it, no HTTP), then the same search over HTTP, for
    ``seconds``; the two see the same moments of the machine's load. Returns their seconds."""
    import httpx

    from rlsi.kernels.threads import compute_threads
    from rlsi.retrieval.live.reader import IndexReader

    local, tally = [], Tally()
    end = time.monotonic() + seconds
    rng = np.random.default_rng(7)
    index = IndexReader.open(folder)
    async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT) as http:
        with compute_threads(1):  # one numba and one BLAS thread, as the server runs a search
            for q in queries[:20]:  # warm-up, both sides
                index.search(q, 10)
                await http.get("search", params={"q": q, "k": 10})
            while time.monotonic() < end:
                q = queries[int(rng.integers(len(queries)))]
                t = time.perf_counter()
                index.search(q, 10)
                local.append(time.perf_counter() - t)
                await _request(http, tally, "search", "GET", "search", end, params={"q": q, "k": 10})
    return local, tally.latency["search"], tally.errors


async def _verify(url, acked):
    """The acknowledged ids missing from the server, and those whose text differs."""
    from urllib.parse import quote

    import httpx

    missing, wrong = [], []
    ids = list(acked)
    sem = asyncio.Semaphore(16)
    async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT) as http:
        async def check(doc_id):
            async with sem:
                r = await http.get("documents/" + quote(doc_id, safe="/"))
            if r.status_code != 200:
                missing.append(doc_id)
            elif r.json()["text"] != acked[doc_id]:
                wrong.append(doc_id)

        await asyncio.gather(*(check(d) for d in ids))
    return missing, wrong


def _http_stack():
    """The HTTP parser and event loop uvicorn picks here (its 'auto' choice)."""
    import importlib.util

    parser = "httptools" if importlib.util.find_spec("httptools") else "h11"
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    return f"{parser} parser, {loop} event loop"


def _pcts(seconds):
    if not seconds:
        return {"n": 0}
    ms = np.asarray(seconds) * 1000
    return {"n": len(ms), "p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95)),
            "p99": float(np.percentile(ms, 99)), "mean": float(ms.mean()), "max": float(ms.max())}


def run(a):
    import shutil

    work = Path(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    facts = harness.machine_facts()
    folder, corpus, pool, queries, data = build(work, a)
    server = Server(folder, corpus, work / "server.log")
    url = server.start()
    local, one, one_errors = asyncio.run(_one_client(url, folder, queries, a.one_client_seconds))
    in_process, one = _pcts(local), _pcts(one)
    harness.log(f"one client: in process p50 {in_process['p50']:.2f} ms, over HTTP p50 {one['p50']:.2f} ms")
    harness.log(f"serving at {url}; {a.clients} clients for {a.seconds} s")
    load_start = os.getloadavg()
    tally, run_facts = asyncio.run(_load(server, url, pool, queries, a))
    load_end = os.getloadavg()
    missing, wrong = asyncio.run(_verify(url, tally.acked))
    harness.log(f"after the kill and restart: {len(missing)} of {len(tally.acked)} acknowledged missing")
    t = time.perf_counter()
    stopped = server.stop()
    stop_s = time.perf_counter() - t
    url = server.start()
    missing2, wrong2 = asyncio.run(_verify(url, tally.acked))
    with urllib.request.urlopen(url + "health", timeout=REQUEST_TIMEOUT) as answer:
        health = json.loads(answer.read())
    server.stop()
    log_lines = (work / "server.log").read_text().splitlines()
    res = {
        "data": data, "clients": a.clients, "seconds": a.seconds, "kill_at": a.kill_at, "add_share": a.add_share,
        "requests": {op: len(v) for op, v in tally.latency.items()},
        "documents_acknowledged": len(tally.acked),
        "requests_per_s": sum(len(v) for v in tally.latency.values()) / run_facts["elapsed_s"],
        "latency_ms": {op: _pcts(v) for op, v in tally.latency.items()},
        "in_process_search_ms": in_process, "one_client_search_ms": one, "one_client_errors": len(one_errors),
        "spanning_kill_ms": {op: _pcts(v) for op, v in tally.spanning.items()},
        "retries": tally.retries, "errors": len(tally.errors), "error_samples": tally.errors[:10],
        "missing_after_kill": len(missing), "wrong_text_after_kill": len(wrong),
        "missing_after_clean_restart": len(missing2), "wrong_text_after_clean_restart": len(wrong2),
        "sigterm_exit_status": stopped, "documents_added": len(tally.acked), "sigterm_stop_s": stop_s, "final_health": health,
        "server_log_errors": [ln for ln in log_lines if "error" in ln.lower()][:10],
        "loadavg_start": load_start, "loadavg_end": load_end, "http": _http_stack(), **run_facts,
    }
    return facts, res


def report(a, facts, r):
    lat, span = r["latency_ms"], r["spanning_kill_ms"]
    rows = [[op, lat[op]["n"], harness.fmt(lat[op]["p50"], 1), harness.fmt(lat[op]["p95"], 1),
             harness.fmt(lat[op]["p99"], 1), harness.fmt(lat[op]["max"], 0), r["retries"][op],
             span[op]["n"], harness.fmt(span[op].get("max"), 0)] for op in ("search", "add")]
    d = r["data"]
    alone = [["in process (`LiveIndex.search`, one thread, no HTTP), in turn with the next row",
              r["in_process_search_ms"]],
             ["one client over HTTP, nothing else asking the server", r["one_client_search_ms"]],
             [f"{r['clients']} clients, adds and the kill included", lat["search"]]]
    alone = [[name, harness.fmt(x["p50"], 2), harness.fmt(x["p95"], 2), harness.fmt(x["p99"], 2)] for name, x in alone]
    text = [
        "# rlsi serve under load, killed in the middle",
        "",
        f"Command: `{harness.command_line(__file__)}`",
        "",
        harness.machine_line(facts),
        f"The machine's {facts['cores']} cores are shared with other jobs (several agents run on it) and with this "
        f"benchmark's own clients (one process, {r['clients']} asyncio tasks): the server, the clients and the "
        f"other work share the same two cores. Load average during the run: {r['loadavg_start'][0]:.2f} at the "
        f"start, {r['loadavg_end'][0]:.2f} at the end (1 minute).",
        "",
        f"Index: 20 Newsgroups, {d['indexed']} posts indexed (`rlsi index --live`, {d['segments']} segment(s)), "
        f"{d['pool']} held out for the clients to add; BatchRLSI K = {d['k']}. Server: `rlsi serve INDEX --corpus "
        f"FILE` on 127.0.0.1 (BLAS in one thread, as `rlsi serve` runs it). Load: {r['clients']} clients for {r['seconds']} s, each request a "
        f"search (2-4 words, top 10) or, with probability {r['add_share']}, a POST of 1-4 new posts; the server "
        f"killed with SIGKILL at {r['kill_at']} s and started again at once.",
        "",
        "| requests | answered | p50 ms | p95 ms | p99 ms | max ms | retries while down | retried requests | "
        "their max ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *["| " + " | ".join(str(c) for c in row) + " |" for row in rows],
        "",
        f"Throughput: {r['requests_per_s']:.1f} requests/s answered over {r['elapsed_s']:.1f} s (kill and restart "
        f"included); errors: {r['errors']} (any answer other than 200, or a timeout).",
        f"Restart after the kill: {r['restart_s']:.1f} s from SIGKILL to the new server's announcement (opening the "
        f"index, reading the corpus texts); requests refused meanwhile were retried every {RETRY_PAUSE * 1000:.0f} "
        f"ms (the retries column) and answered by the new server.",
        f"CPU: the server {r['server_cpu_s']:.1f} s and the clients {r['clients_cpu_s']:.1f} s over the "
        f"{r['elapsed_s']:.1f} s of the run ({(r['server_cpu_s'] + r['clients_cpu_s']) / r['elapsed_s']:.2f} of the "
        f"{facts['cores']} cores); uvicorn's HTTP: {r['http']}.",
        "",
        "Searches alone and under load (the same queries):",
        "",
        "| searches | p50 ms | p95 ms | p99 ms |",
        "|---|---:|---:|---:|",
        *["| " + " | ".join(str(c) for c in row) + " |" for row in alone],
        "",
        f"Acknowledged documents: {r['documents_acknowledged']} ({r['acked_before_kill']} before the kill). "
        f"Missing after the kill and restart: {r['missing_after_kill']} (text differing: "
        f"{r['wrong_text_after_kill']}); after a SIGTERM stop (exit status {r['sigterm_exit_status']}, "
        f"{r['sigterm_stop_s']:.1f} s) and another start: {r['missing_after_clean_restart']} (text differing: "
        f"{r['wrong_text_after_clean_restart']}). The index then held {r['final_health']['documents']} documents "
        f"at generation {r['final_health']['generation']} in {r['final_health']['segments']} segment(s).",
    ]
    if r["error_samples"]:
        text += ["", "Errors: " + "; ".join(r["error_samples"])]
    if r["server_log_errors"]:
        text += ["", "Server log lines with 'error': " + "; ".join(r["server_log_errors"])]
    return "\n".join(text) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for flag, kind, default, what in (
            ("--clients", int, 32, "concurrent clients"),
            ("--seconds", float, 30.0, "length of the load"),
            ("--kill-at", float, 15.0, "second of the load at which the server is killed (SIGKILL)"),
            ("--add-share", float, 0.2, "share of the requests that add documents"),
            ("--pool", int, 4000, "posts held out for the clients to add"),
            ("--k", int, 100, "topics of the model"),
            ("--fit-iters", int, 5, "iterations of the model's fit"),
            ("--one-client-seconds", float, 5.0, "searches of one client alone before the load (no queueing)"),
            ("--workdir", str, str(harness.ROOT / "benchmarks" / "out" / "serve"), "scratch folder"),
            ("--out", str, None, "the Markdown report (and its .json beside it)")):
        p.add_argument(flag, type=kind, default=default, help=what)
    a = p.parse_args(argv)
    if not (0 < a.kill_at < a.seconds):
        p.error("--kill-at must be inside the run (0 < --kill-at < --seconds)")
    facts, res = run(a)
    text = report(a, facts, res)
    print(text)
    if a.out:
        harness.write_report(a.out, text)
        harness.write_json(Path(a.out).with_suffix(".json"), {"machine": facts, "serve": res})
    bad = res["errors"] or res["missing_after_kill"] or res["missing_after_clean_restart"] or res["wrong_text_after_kill"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
