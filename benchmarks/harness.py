"""What the benchmark scripts share: process memory, machine facts, child processes, timers, reports.

* Memory: :func:`peak_rss_gb` / :func:`current_rss_gb` read ``VmHWM`` / ``VmRSS`` of this process
  (``ru_maxrss`` is not used: on Linux it carries the parent's peak over fork + exec); :class:`RSSSampler`
  samples the peak over a stretch of code, relative to a baseline.
* Machine: :func:`machine_facts` (CPU, cores, memory, BLAS and numba threads via threadpoolctl, load
  average, library versions, the commit of the code measured), :func:`loadavg`, :func:`wait_idle`.
* Children: every method runs in its own process (so its peak memory is its own) with
  :func:`run_child`, which collects the JSON the child writes (to a file or as its last stdout line);
  :func:`thread_env` pins numba and BLAS threads; :func:`accounting` measures a child's wall/CPU/load.
* Timers: :func:`timed`, and :class:`PhaseProfiler`, nested phase timers keyed by their path
  (``("U-step", "update_topics", "lasso_rows")``) so that a report can show every phase with the
  untimed rest of its parent.
* Reports: :func:`md_table`, :func:`fmt`, :func:`write_report` (text below :data:`NOTES_MARKER` in an
  existing result file is kept), :func:`command_line`, :func:`shared_data`, :func:`log`.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NOTES_MARKER = "<!-- notes: text below this line is kept when the report is regenerated -->"
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def use_src():
    """Import rlsi from this checkout's ``src/`` (and the benchmark helpers from ``benchmarks/``)."""
    for p in (str(HERE), str(ROOT / "src")):
        if p not in sys.path:
            sys.path.insert(0, p)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def shared_data():
    """``../shared/data`` next to the repository (the project's development data; may be absent)."""
    return (ROOT.parent / "shared" / "data").resolve()


# ------------------------------------------------------------------------------------------ memory
def _status_gb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 2**20  # kB -> GiB
    return float("nan")


def peak_rss_gb():
    """Peak resident memory of this process (``VmHWM``), GiB."""
    return _status_gb("VmHWM")


def current_rss_gb():
    """Resident memory of this process now (``VmRSS``), GiB."""
    return _status_gb("VmRSS")


class RSSSampler:
    """Peak resident memory over a stretch of code, sampled every ``period`` seconds on a thread (psutil):
    ``start()``, ``now()`` (also updates the peak), ``stop()``; ``peak`` in bytes. Unlike ``VmHWM`` it can
    be read relative to a baseline taken after loading the data."""

    def __init__(self, period=0.002):
        import threading

        import psutil

        self.proc = psutil.Process()
        self.period = period
        self.peak = self.proc.memory_info().rss
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def now(self):
        rss = self.proc.memory_info().rss
        self.peak = max(self.peak, rss)
        return rss

    def _run(self):
        while not self._halt.is_set():
            self.now()
            time.sleep(self.period)

    def start(self):
        self._thread.start()

    def stop(self):
        self._halt.set()
        self._thread.join()
        return self.now()


# ----------------------------------------------------------------------------------------- machine
def loadavg():
    """1-minute load average."""
    return os.getloadavg()[0]


def cpu_idle_share(seconds=3.0):
    """Share of idle CPU time over ``seconds`` (all cores), from /proc/stat."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return v[3] + v[4], sum(v)  # idle + iowait, total
    i0, t0 = snap()
    time.sleep(seconds)
    i1, t1 = snap()
    return (i1 - i0) / max(t1 - t0, 1)


def wait_idle(max_wait, share=0.75):
    """Wait up to ``max_wait`` seconds for >= ``share`` idle CPU; returns the last idle share measured."""
    t = time.perf_counter()
    idle = cpu_idle_share()
    while idle < share and time.perf_counter() - t < max_wait:
        idle = cpu_idle_share()
    return idle


def thread_info():
    """``{"numba_threads": n, "blas_threads": [..]}`` of this process."""
    import numba
    from threadpoolctl import threadpool_info

    return {"numba_threads": numba.get_num_threads(),
            "blas_threads": sorted({i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"})}


def code_version(paths=("src/rlsi/models", "src/rlsi/kernels", "src/rlsi/oracle")):
    """Short commit of the checkout, and whether the measured code has uncommitted changes."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", *paths],
                               capture_output=True, text=True).stdout.split()
        files = sorted(set(dirty) - {"M", "??", "A", "D"})
        return head + (f" + uncommitted changes in {', '.join(files)}" if files
                       else f" (no uncommitted changes in {', '.join(p.split('/')[-1] for p in paths)})")
    except Exception:  # noqa: BLE001 -- no git: the report says so
        return "?"


def machine_facts():
    """CPU, cores, memory, BLAS (threadpoolctl), numba threads, load, versions, code: a dict of strings."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        fam = {k.strip(): v.strip() for k, v in (ln.split(":", 1) for ln in out.splitlines() if ":" in ln)}
        cpu += f" (family {fam.get('CPU family')}, model {fam.get('Model')}, L3 {fam.get('L3 cache')})"
    except Exception:  # noqa: BLE001 -- not Linux: keep what platform gave
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            kb = next(int(ln.split()[1]) for ln in f if ln.startswith("MemTotal"))
        mem = f"{kb / 2**20:.1f} GiB"
    except Exception:  # noqa: BLE001
        pass
    import numba
    import numpy
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    blas = "; ".join(f"{i.get('internal_api')} {i.get('version')} ({i.get('threading_layer')}, "
                     f"{i.get('num_threads')} threads, {i.get('architecture')})"
                     for i in threadpool_info() if i.get("user_api") == "blas")
    return {"code": code_version(), "cpu": cpu, "cores": os.cpu_count(), "memory": mem, "blas": blas,
            "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__, "numba": f"{numba.__version__} ({numba.get_num_threads()} threads)"}


def load_note(facts):
    """What the load average at the start says about other work on the machine (a sentence)."""
    first = float(facts["loadavg"].split()[0])
    if first < 0.5:
        return (f"Load average at the start {facts['loadavg']}: no other work was running then (others may "
                f"start later: compare rows of one run).")
    return (f"Load average at the start {facts['loadavg']}: work was running (other jobs, or this run's own "
            f"earlier steps); where it was other jobs, wall-clock and even CPU times move (caches, memory "
            f"bandwidth): compare rows of one run.")


def machine_line(facts):
    """One markdown sentence with :func:`machine_facts`."""
    return (f"**Machine.** CPU {facts['cpu']}, {facts['cores']} cores, {facts['memory']} RAM; BLAS: "
            f"{facts['blas']}; Python {facts['python']}, numpy {facts['numpy']}, scipy {facts['scipy']}, "
            f"scikit-learn {facts['scikit-learn']}, numba {facts['numba']}. " + load_note(facts))


def corpus_args(p, *, docs=50_000, terms=200_000, tokens=150, k=200):
    """The synthetic corpus's size arguments (``--docs --terms --tokens --k``) on parser ``p``, with these
    defaults (the 50k x 200k, K = 200 corpus of the batch benchmarks)."""
    p.add_argument("--docs", type=int, default=docs)
    p.add_argument("--terms", type=int, default=terms)
    p.add_argument("--tokens", type=int, default=tokens)
    p.add_argument("--k", type=int, default=k)


# ---------------------------------------------------------------------------------------- children
def thread_env(threads=None, *, blas=None, numba=None):
    """Environment variables pinning BLAS (``blas`` or ``threads``) and numba (``numba`` or ``threads``)."""
    env = {}
    b, n = blas or threads, numba or threads
    if b:
        env.update({v: str(b) for v in THREAD_VARS})
    if n:
        env["NUMBA_NUM_THREADS"] = str(n)
    return env


def child_env(extra=None, drop=()):
    """``os.environ`` with ``src/`` on PYTHONPATH, ``extra`` set and ``drop`` removed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for k in drop:
        env.pop(k, None)
    env.update(extra or {})
    return env


def run_child(cmd, *, env=None, result=None, capture=False):
    """Run ``cmd`` (a list) and return the JSON it produced: the file ``result`` (removed after reading)
    or, if None, the last line of its stdout. A failed child gives ``{"error": ...}``."""
    proc = subprocess.run(cmd, env=env, capture_output=capture or result is None, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or "")[-3000:]
        return {"error": f"exit code {proc.returncode}" + (f": {tail}" if tail else "")}
    if result is not None:
        result = Path(result)
        if not result.exists():
            return {"error": f"no result file {result}"}
        out = json.loads(result.read_text())
        result.unlink()
        return out
    return json.loads(proc.stdout.strip().splitlines()[-1])


@contextmanager
def accounting(res):
    """Record the block's wall time, process CPU time and load average into ``res["process"]``."""
    load0, t0, c0 = loadavg(), time.perf_counter(), os.times()
    try:
        yield res
    finally:
        c1 = os.times()
        res["process"] = {"wall_s": time.perf_counter() - t0, "cpu_s": c1.user + c1.system - c0.user - c0.system,
                          "loadavg_start": load0, "loadavg_end": loadavg()}


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))


# ------------------------------------------------------------------------------------------- timers
def timed(fn, *a, **k):
    """``(fn(*a, **k), seconds)``."""
    t = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t


class PhaseProfiler:
    """Nested phase timers. A phase is keyed by its path: the names of the phases open around it.

    ``record`` is the dict that receives seconds (``path -> s``) and call counts (``("#",) + path``);
    the caller switches it (one per iteration, a throwaway one for warm-ups). Timers nest through a
    stack, so ``children(path)`` and the untimed rest of a phase (its time minus its children's) follow.
    Single-threaded use (the serial executor); concurrent timers would interleave the stack.
    """

    def __init__(self):
        self.stack = []
        self.record = defaultdict(float)

    @contextmanager
    def phase(self, name):
        self.stack.append(name)
        path = tuple(self.stack)
        t = time.perf_counter()
        try:
            yield path
        finally:
            self.record[path] += time.perf_counter() - t
            self.record[("#",) + path] += 1
            self.stack.pop()

    def wrap(self, fn, name, post=None):
        """``fn`` timed as phase ``name``; ``post(out, args, kwargs)`` runs after the timer stops."""
        def timed_fn(*a, **k):
            with self.phase(name):
                out = fn(*a, **k)
            if post is not None:
                post(out, a, k)
            return out
        timed_fn.__wrapped__ = fn
        return timed_fn

    def patch(self, owner, attr, name=None, post=None):
        """Replace ``owner.attr`` by its timed version (module function or class attribute)."""
        fn = getattr(owner, attr)
        setattr(owner, attr, self.wrap(fn, name or attr, post))


def phase_tree(records):
    """Paths of all timed phases in ``records`` (dicts path -> s), parents before children, in first-seen
    order."""
    seen = {}
    for r in records:
        for p in r:
            if isinstance(p, tuple) and p and p[0] != "#":
                for i in range(1, len(p) + 1):
                    seen.setdefault(p[:i], None)
    order, kids = [], defaultdict(list)
    for p in seen:
        kids[p[:-1]].append(p)

    def visit(p):
        order.append(p)
        for c in kids[p]:
            visit(c)
    for p in kids[()]:
        visit(p)
    return order, kids


# ------------------------------------------------------------------------------------------ reports
def fmt(x, d=2):
    """``x`` with ``d`` decimals, or an em dash for None / NaN."""
    if x is None or (isinstance(x, float) and x != x) or (isinstance(x, float) and abs(x) == float("inf")):
        return "—"
    return f"{x:.{d}f}"


def md_table(header, rows, align=None):
    """Markdown table lines; ``align`` is a string of "l"/"r" per column (default: first left, rest right)."""
    align = align or "l" + "r" * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def command_line(script, argv=None):
    """The command that reproduces this run, from the repository root."""
    argv = sys.argv[1:] if argv is None else argv
    rel = os.path.relpath(Path(script).resolve(), ROOT)
    return "PYTHONPATH=src python " + " ".join(shlex.quote(x) for x in [rel, *argv])


def write_report(path, text, *, marker=False):
    """Write ``text`` to ``path``; what stood below :data:`NOTES_MARKER` in the old file is kept
    (``marker=True`` writes the marker even when there are no notes yet)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    notes = ""
    if path.exists():
        old = path.read_text()
        if NOTES_MARKER in old:
            notes = old[old.index(NOTES_MARKER):]
    text = text.rstrip("\n") + "\n"
    if marker and not notes:
        notes = NOTES_MARKER + "\n"
    path.write_text(text + ("\n" + notes if notes else ""))
