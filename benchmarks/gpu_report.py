"""The markdown report of ``bench_gpu.py``'s record, one section per stage (rewritten after every change, so a run
cut short keeps what it measured)."""

from pathlib import Path

import harness

#: the script whose command the report names
SCRIPT = Path(__file__).resolve().parent / "bench_gpu.py"


# ----------------------------------------------------------------------------------------- report
def gb(x):
    return "—" if x is None else f"{x / 1e9:.2f} GB"


def report(a, rec):
    """The markdown of the record (written after every change, so a run cut short keeps what it measured)."""
    f = harness.fmt
    L = ["# RLSI on a GPU (rlsi.gpu)", "", "    " + harness.command_line(SCRIPT, a.argv), ""]
    if a.smoke:
        L += ["**Smoke run**: tiny sizes, the device code path on numpy (or the stand-in for CuPy); the numbers "
              "mean nothing.", ""]
    if rec.get("facts"):
        L += [harness.machine_line(rec["facts"]), ""]
    L += [f"**Device.** {rec.get('device')}.", "",
          f"Stages and caps (s): {', '.join(f'{k} {v}' for k, v in rec['plan'].items())}; budget "
          f"{rec['budget_s']:.0f} s, {rec.get('seconds', 0):.0f} s spent.", ""]
    rows = [[k, v.get("status", "?"), f(v.get("seconds"), 0), f(v.get("cap_s"), 0), v.get("error", v.get("oom", ""))]
            for k, v in rec["stages"].items()]
    L += harness.md_table(["stage", "status", "s", "cap s", "note"], rows, "lllll") + [""]
    for name, lines in SECTIONS.items():
        st = rec["stages"].get(name)
        L += lines(a, st) if st else []
    return "\n".join(L)


def paper_lines(a, st):
    if "nnz" not in st:
        return []
    return batch_lines("paper", st) + (batch_lines("paper again, without the pool limit", st["unlimited"])
                                       if "unlimited" in st else [])


def online_paper_lines(a, st):
    if "plan_bytes" not in st:
        return []
    f = harness.fmt
    L = [f"## paper-online: OnlineRLSI at {st['terms']:,} terms, K = {st['k']}, ρ = 1, ξ = 10", "",
         f"Mini-batches of {st['batch']} documents of the paper corpus, λ₁ = {st['lambda1']:.4g} per 1000 documents, "
         f"topic_sweeps = {a.sweeps}, pool limit 40 GB: memory {pass_word(st.get('memory_pass'))}. Plan: "
         f"{st['plan']}.", ""]
    rows = [[i + 1, f(r["s"], 2), gb(r["mem"].get("held")), gb(r["mem"].get("used")), r["live_rows"]]
            for i, r in enumerate(st["rows"])]
    L += harness.md_table(["mini-batch", "s", "pool peak", "pool used after", "live rows"], rows) + [""]
    return L + ([f"{st['docs_per_s']:,.0f} documents per second (mini-batches 2 on).", ""] if "docs_per_s" in st
                else [])


def card_lines(a, st):
    if "outcomes" not in st:
        return []
    counts = {o: list(st["outcomes"].values()).count(o) for o in ("PASSED", "FAILED", "SKIPPED", "ERROR")}
    return ["## card-tests: tests/gpu/test_cuda.py on the card", "",
            ", ".join(f"{v} {k.lower()}" for k, v in counts.items())
            + f" (exit code {st.get('returncode')}; log {st.get('log')}).", ""] + [
        f"- {t}: {o}" for t, o in st["outcomes"].items()] + [""]


def check_lines(a, st):
    if "cpu" not in st:
        return []
    f, c = harness.fmt, st["cpu"]
    head = (f"## check: the device fit against the CPU fit ({st['docs']} x {st['terms']}, nnz {st['nnz']:,}, "
            f"K = {st['k']})")
    rows = [["CPU (host problem)", f(c["iter_s"], 4), f(c["u_s"], 4), f(c["v_s"], 4), f(c["rows"][-1]["objective"], 8),
             "—", "—"]]
    rows += [[d["device"], f(d["iter_s"], 4), f(d["u_s"], 4), f(d["v_s"], 4), f(d["rows"][-1]["objective"], 8),
              f"{d['rel_diff'][-1]:.2e}", f"{c['iter_s'] / d['iter_s']:.1f}x"] for d in st.get("device", [])]
    return [head, "", f"The same W₀, {a.iters} iterations; CPU {c['threads']} threads; seconds per iteration: mean "
                      f"of iterations 2 on.", ""] + harness.md_table(
        ["fit", "s / iter", "U-step", "V-step", "objective", "rel. diff to CPU", "speed-up"], rows) + [""]


def options_lines(a, st):
    f = harness.fmt
    rows = [[o["variant"], "skipped" if "skipped" in o else f(o["iter_s"], 4), f(o.get("u_s"), 4),
             f(o.get("v_s"), 4), f(o.get("objective"), 8)] for o in st.get("variants", [])]
    return (["## options: the device problem's ways of working (check corpus)", ""]
            + harness.md_table(["variant", "s / iter", "U-step", "V-step", "objective"], rows) + [""]) if rows else []


def online_lines(a, st):
    if "ratio" not in st:
        return []
    return [f"## online: tracking (ρ = 1, ξ = 10), check corpus, K = {st['k']}, mini-batches of {st['batch']}", "",
            f"{st['docs']} documents: CPU ({st['threads']} threads) {st['cpu_docs_per_s']:,.0f} documents/s, device "
            f"{st['device_docs_per_s']:,.0f} documents/s ({st['ratio']:.1f}x); topics apart by "
            f"{st['topic_max_rel_diff']:.2e} (max, relative to the largest weight).", ""]


def mid_lines(a, st):
    return batch_lines("mid", st) if "nnz" in st else []


#: The report's sections, in order, by stage.
SECTIONS = {"paper": paper_lines, "paper-online": online_paper_lines, "card-tests": card_lines, "check": check_lines,
            "options": options_lines, "online": online_lines, "mid": mid_lines}


def pass_word(ok):
    return {True: "**pass**", False: "**fail** (out of memory)", None: "not measured (no card)"}[ok]


def batch_lines(name, st):
    f = harness.fmt
    L = [f"## {name}: {st['docs']:,} x {st['terms']:,}, nnz {st['nnz']:,}, K = {st['k']} (device only)", ""]
    L += [(f"CuPy's kernels compiled on a small fit first: {f(st['warm_s'], 1)} s. " if "warm_s" in st else "") +
          (f"Corpus made on the card in {f(st.get('gen_s'), 1)} s; " if "gen_s" in st else "") +
          f"W₀ (init='docs' on the card) "
          f"{f(st.get('init_s'), 1)} s; set-up {f(st.get('setup_s'), 1)} s. λ₁ = "
          f"{f(st.get('lambda1_per_1000'), 5)} per 1000 documents (for AvgComp ≈ 0.0044). Pool limit: "
          f"{gb(st.get('limit')) if st.get('limit') else 'none'}; memory {pass_word(st.get('memory_pass'))}."]
    if "plan" in st:
        L += [f"Memory plan (at the assumed density): {st['plan']}. Pool after set-up, emptied: "
              f"{gb(st.get('resident', {}).get('used'))} used."]
    L += [""]
    rows = []
    for i, r in enumerate(st.get("rows", [])):
        mu, mv = r.get("mem_u", {}), r.get("mem_v", {})
        rows.append([i + 1, f(r["u"], 2), f(r["v"], 2), f"{r['avgcomp']:.4f}", f(r["objective"], 6),
                     gb(mu.get("held")), gb(mv.get("held")), gb(mv.get("used") or mu.get("used")),
                     gb(r["plan_at_density"])])
    if rows:
        L += harness.md_table(["iteration", "U-step s", "V-step s", "AvgComp", "objective", "pool peak U-step",
                               "pool peak V-step", "pool used after", "plan at this AvgComp"], rows)
        L += ["", "Pool peaks: CuPy's pool emptied before the step, ``total_bytes()`` after it (first "
              "iterations only; later ones keep the pool for their timings).", ""]
    return L
