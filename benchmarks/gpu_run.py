"""The plan of ``bench_gpu.py`` (the shapes, the stages and their caps, the paper's memory target) and what
every stage uses: the run's clock and record (written after each change), a step timed between two device
synchronizations, and CuPy's memory pool."""

import json
import os
import shutil
import time
from pathlib import Path

import harness
from gpu_report import report


PAPER = (1_600_000, 7_000_000, 300, 500)  # docs, terms, tokens per document, K
MID = (400_000, 2_000_000, 300, 500)
CHECK = (50_000, 200_000, 150, 200)
SMOKE = {"paper": (2_000, 8_000, 30, 16), "mid": (1_500, 6_000, 30, 16), "check": (1_000, 4_000, 50, 15)}
#: Stages in order, with their caps in seconds.
STAGES = {"paper": 200, "paper-online": 55, "card-tests": 100, "check": 60, "options": 20, "online": 20, "mid": 120}
LIMIT = 40 * 10 ** 9  # the paper shape's memory target: the pool limit of the paper stages
CHECK_LAMBDA1 = 0.000679  # per 1000 documents: AvgComp 0.0086 on the check corpus (the paper's compactness)
LAMBDA2 = 1.0  # the paper's λ₂


# ----------------------------------------------------------------------------------------- clock, record
class Run:
    """The clock (``budget`` seconds in all, each stage its cap) and the record, written after each change."""

    def __init__(self, a, be_name):
        self.a, self.be_name = a, be_name
        self.t0 = time.perf_counter()
        self.rec = {"device": None, "facts": None, "stages": {}, "plan": dict(STAGES), "budget_s": a.budget}
        self.deadline = self.t0 + a.budget
        self.children = []  # subprocesses to end at a hard stop

    def left(self):
        return self.deadline - time.perf_counter()

    def stage(self, name):
        cap = min(self.a.caps.get(name, STAGES[name]), self.left())
        st = {"status": "running", "cap_s": round(cap, 1), "started_s": round(time.perf_counter() - self.t0, 1)}
        self.rec["stages"][name] = st
        st["_end"] = time.perf_counter() + cap
        self.write()
        harness.log(f"== {name} (cap {cap:.0f} s, {self.left():.0f} s left)")
        return st

    @staticmethod
    def time_left(st):
        return st["_end"] - time.perf_counter()

    def done(self, st, status="done"):
        st["status"] = status
        st["seconds"] = round(time.perf_counter() - self.t0 - st["started_s"], 1)
        self.write()

    def write(self):
        self.rec["seconds"] = round(time.perf_counter() - self.t0, 1)
        clean = json.loads(json.dumps(self.rec, default=str, indent=None), object_hook=lambda d: {
            k: v for k, v in d.items() if not k.startswith("_")})
        if self.a.json:
            tmp = Path(str(self.a.json) + ".tmp")
            tmp.write_text(json.dumps(clean, indent=1))
            os.replace(tmp, self.a.json)
        out = Path(self.a.out)  # replaced whole (a kill mid-write leaves the previous report), notes kept
        tmp = out.with_name(out.name + ".tmp")
        if out.exists():
            shutil.copyfile(out, tmp)
        harness.write_report(tmp, report(self.a, clean), marker=True)
        os.replace(tmp, out)
        if self.a.on_write is not None:
            self.a.on_write(clean)


def sync_time(be, fn):
    be.synchronize()
    t = time.perf_counter()
    out = fn()
    be.synchronize()
    return out, time.perf_counter() - t


class Memory:
    """CuPy's pool on a card (None on numpy): emptied, its limit, what is used and what it held at most."""

    def __init__(self, be):
        self.pool = be.xp.get_default_memory_pool() if be.is_cuda else None
        self.be = be

    def reset(self):
        if self.pool is not None:
            self.pool.free_all_blocks()

    def limit(self, size):
        if self.pool is not None:
            self.pool.set_limit(size=int(size))

    def read(self):
        if self.pool is None:
            return {}
        free, total = self.be.xp.cuda.runtime.memGetInfo()
        return {"used": int(self.pool.used_bytes()), "held": int(self.pool.total_bytes()),
                "card_used": int(total) - int(free)}


def oom_types(be):
    return (MemoryError,) + ((be.xp.cuda.memory.OutOfMemoryError,) if be.is_cuda else ())
