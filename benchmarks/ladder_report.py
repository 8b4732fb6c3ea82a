"""The reports of ``bench_scale_ladder.py`` from its JSON records: the peers' report, the log-log plot of time per
iteration against nnz(D) and K with the fitted exponents, and the ladder's markdown summary."""

import json
from pathlib import Path

import harness
from ladder_memory import GiB, PEERS, largest_size

#: the script whose ``plot`` command the report names
SCRIPT = Path(__file__).resolve().parent / "bench_scale_ladder.py"


def load_json(path):
    path = Path(path)
    if not path.exists():
        return []
    return json.loads(path.read_text())


def _commands(records):
    """The distinct commands that wrote ``records``, in first-seen order."""
    return list(dict.fromkeys(r["command"] for r in records if r.get("command")))


def peers_report(records, a):
    """Markdown: the commands, each peer record (time, cap, peak RSS against the model, load), and the largest
    size of each peer within ``a.fit_in`` bytes by its memory model."""
    recs = [r for r in records if str(r.get("step", "")).startswith("peer:")]
    cmds = _commands(recs)
    L = ["# Peers on the scale ladder: time caps, per iteration / per pass, memory models", "",
         "Commands (each appended its records to the JSON; the report is rewritten from all of them):", ""]
    L += [f"    {c}" for c in cmds] + [""]
    facts = next((r["machine"] for r in recs if "machine" in r), None)
    if facts:
        L += [harness.machine_line(facts), ""]
    rows = []
    for r in recs:
        s = r["size"]
        where = f"{s['docs']} x {s['terms']} (nnz {s['nnz']})"
        load = f"{r.get('loadavg_before', '?')} → {r.get('loadavg_after', '?')}"
        if "skipped" in r:
            rows.append([r["step"][5:], where, r["k"], "—", "—", "—", _gb(r.get("estimate")), r["skipped"], load])
        elif "error" in r:
            got = r.get("progress")
            how = r["status"]
            if got and "docs_seen" in got:
                how += (f"; {got['docs_seen']} of {got['of']} documents handed to the model by "
                        f"{got.get('docs_seen_at_s', got.get('seconds', 0)):.0f} s")
            if got and "power_iterations_done" in got:
                ends = ", ".join(f"{x:.0f}" for x in got["power_iteration_times"])
                how += (f"; {got['power_iterations_done']} of {r.get('n_iter', '?')} power iterations done"
                        + (f" (ended at {ends} s)" if ends else ""))
            if got and "in" in got and "seconds" in got:
                how += f"; last seen in `{got['in']}` at {got['seconds']:.0f} s"
            rows.append([r["step"][5:], where, r["k"], f"> {r.get('time_cap_s', 0):.0f} (cap)", "—",
                         f"≥ {_gb(r.get('rss_sampled_max'))} (sampled)", _gb(r.get("estimate")), how, load])
        else:
            rows.append([r["step"][5:], where, r["k"], f"{r['seconds']:.1f}", f"{r['per_iteration_s']:.1f}",
                         _gb(r["peak_rss"]), _gb(r.get("estimate")), r.get("what", ""), load])
    L += ["## Runs", "", *harness.md_table(
        ["peer", "N x M", "K", "seconds", "per iteration / pass s", "peak RSS", "memory model", "what",
         "load average (1, 5, 15 min) before → after"], rows, align="lllrrrrll"), ""]
    shapes = {}
    for r in recs:
        s = r["size"]
        shapes.setdefault((s["docs"], s["terms"], s["nnz"], r["k"]), r)
    fit_in = a.fit_in
    rows = []
    for (docs, terms, nnz, K), r in shapes.items():
        for name in PEERS:
            n, m, z, need = largest_size(name, K, fit_in, docs=docs, terms=terms, nnz=nnz,
                                         lsi_chunk=a.lsi_chunk, batch=a.nmf_batch)
            rows.append([name, K, f"{docs} x {terms}, nnz/doc {nnz / docs:.0f}", f"{n} x {m}", z, _gb(need)])
    L += [f"## Largest size within {fit_in / GiB:.0f} GiB by the memory models", "",
          "The shape of each measured corpus kept (M/N and nnz per document), float32 values, int32 indices "
          "(int64 beyond 2³¹ entries); the model is `peer_memory` of this script (the input, the method's "
          "largest arrays, 0.3 GiB for the process), compared with the measured peaks above.", "",
          *harness.md_table(["peer", "K", "shape of", "largest N x M", "nnz", "model there"], rows,
                            align="lrlrrr"), ""]
    L += ["Peak RSS is each child's `VmHWM`; a child stopped at the cap reports the largest RSS sampled "
          "(every 0.2 s) instead. The cores were shared with other work (several agents on this machine): "
          f"wall-clock times; the children ran with {', '.join(sorted({str(r.get('threads')) for r in recs}))} "
          "numba/BLAS/OpenMP threads."]
    return "\n".join(L)


# -------------------------------------------------------------------------------------------- plot
def batch_points(records):
    """``[(docs, terms, nnz, K, seconds per iteration)]`` of the batch records that ran: the mean of
    U-step + V-step over the iterations after the first (the first when there is only one)."""
    pts = []
    for r in records:
        its = r.get("iterations")
        if r.get("step") != "batch" or not its:
            continue
        use = its[1:] or its
        per = sum(it["u_s"] + it.get("v_s", 0.0) for it in use) / len(use)
        pts.append((r["size"]["docs"], r["size"]["terms"], r["size"]["nnz"], r["k"], per))
    return pts


def fit_exponent(x, y):
    """Least-squares slope and intercept of log y on log x (``y ≈ e^c x^p``): ``(p, c)``; None with fewer
    than two distinct x."""
    import numpy as np

    x, y = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    if len(set(x.tolist())) < 2:
        return None
    p, c = np.polyfit(x, y, 1)
    return float(p), float(c)


def cmd_plot(a):
    if a.png is None and a.md is None:
        raise SystemExit("plot: give --md (the PNG goes next to it) or --png")
    if a.png is None:  # next to the report, never over the committed scale_ladder.png by default
        a.png = Path(a.md).with_suffix(".png")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    records = load_json(a.json)
    pts = batch_points(records)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    by_k = {}
    for d, m, nnz, K, t in pts:
        by_k.setdefault(K, []).append((nnz, t))
    for K, xy in sorted(by_k.items()):
        xy.sort()
        x, y = zip(*xy)
        fit = fit_exponent(x, y)
        label = f"BatchRLSI K={K}" + (f": t ∝ nnz^{fit[0]:.2f}" if fit else "")
        ax1.loglog(x, y, "o-", label=label)
    for name in PEERS:
        ran = [r for r in records if r.get("step") == f"peer:{name}" and "per_iteration_s" in r]
        for K in sorted({r["k"] for r in ran}):
            x, y = zip(*sorted((r["size"]["nnz"], r["per_iteration_s"]) for r in ran if r["k"] == K))
            fit = fit_exponent(x, y)
            ax1.loglog(x, y, "s--", label=f"{name} K={K}" + (f": t ∝ nnz^{fit[0]:.2f}" if fit else ""))
    ax1.set_xlabel("nnz(D)")
    ax1.set_ylabel("seconds per iteration (U-step + V-step)")
    ax1.set_title("time per iteration vs nnz(D)")
    ax1.legend(fontsize=8)
    by_size = {}
    for d, m, nnz, K, t in pts:
        by_size.setdefault((d, m), []).append((K, t))
    for (d, m), xy in sorted(by_size.items()):
        xy.sort()
        x, y = zip(*xy)
        fit = fit_exponent(x, y)
        ax2.loglog(x, y, "o-", label=f"{d} x {m}" + (f": t ∝ K^{fit[0]:.2f}" if fit else ""))
    ax2.set_xlabel("K")
    ax2.set_title("time per iteration vs K")
    ax2.legend(fontsize=8)
    for ax in (ax1, ax2):
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("BatchRLSI scale ladder (synthetic corpora; 2 shared cores; wall clock)", fontsize=10)
    fig.tight_layout()
    Path(a.png).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.png, dpi=110)
    harness.log(f"wrote {a.png} ({len(pts)} batch points)")
    if a.md:
        harness.write_report(a.md, report(records, a), marker=True)
        harness.log(f"wrote {a.md}")
    del np
    return 0


def _gb(x):
    return "—" if x is None else f"{x / GiB:.2f} GiB"


def report(records, a):
    """A markdown summary of every record in the JSON (the commands first)."""
    cmds = _commands(records)
    L = ["# Scale ladder: BatchRLSI per iteration, online RLSI, peers", "",
         "Commands (each appended its records to the JSON; this file and the PNG come from `plot`):", ""]
    L += [f"    {c}" for c in cmds]
    L += ["", f"    {harness.command_line(SCRIPT, ['plot', '--json', str(a.json), '--png', str(a.png), '--md', str(a.md)])}",
          ""]
    facts = next((r["machine"] for r in records if "machine" in r), None)
    if facts:
        L += [harness.machine_line(facts), ""]
    rows = []
    for r in records:
        if r.get("step") != "batch":
            continue
        s = r["size"]
        if "skipped" in r or "error" in r:
            rows.append([f"{s['docs']} x {s['terms']}", s["nnz"], r["k"], f"{r['lambda1']:.4g}", "—", "—", "—", "—", "—",
                         r.get("skipped") or r.get("status"), "—"])
            continue
        for j, it in enumerate(r["iterations"], 1):
            rows.append([f"{s['docs']} x {s['terms']}", s["nnz"], r["k"], f"{r['lambda1']:.4g}", j,
                         f"{it['u_s']:.2f}", f"{it.get('v_s', float('nan')):.2f}", it["nnz_U"],
                         f"{it['avgcomp']:.5f}", it["dead"],
                         f"{_gb(r['peak_rss'])} (est. {_gb(r['estimate'])})" if j == len(r["iterations"]) else ""])
    L += ["## BatchRLSI", "", *harness.md_table(
        ["N x M", "nnz(D)", "K", "λ1 (per 1000 docs)", "iteration", "U-step s", "V-step s", "nnz(U)", "AvgComp",
         "dead", "peak RSS (estimate)"], rows), ""]
    setup = [f"{r['size']['docs']} x {r['size']['terms']}, K={r['k']}: {r['setup_s']:.1f} s"
             for r in records if r.get("step") == "batch" and "setup_s" in r]
    if setup:
        L += ["Initialization (W₀ from K documents) and problem setup, before the first U-step: "
              + "; ".join(setup) + ".", ""]
    rows = []
    for r in records:
        st = r.get("step", "")
        if st in ("generate", "search", "online") or st.startswith("peer:"):
            s = r["size"]
            if "skipped" in r or "error" in r:
                what = r.get("skipped") or r.get("status")
                rows.append([st, f"{s['docs']} x {s['terms']}", r["k"], "—", "—", what])
                continue
            extra = {"generate": lambda r: f"{r['n_tokens'] / s['docs']:.0f} tokens/doc",
                     "search": lambda r: f"λ1 = {r['lambda1']:.4g} per 1000 docs for {r['target_terms_per_topic']} "
                                         f"terms/topic; AvgComp after 1 iteration {r['avgcomp_after_1_iteration']:.5f}",
                     "online": lambda r: f"{r['n_batches']} mini-batches, nnz(U) {r['nnz_U']}, AvgComp "
                                         f"{r['avgcomp']:.5f}, {r['dead']} dead; estimate {_gb(r['estimate'])}"
                                         + (f"; CPU {r['cpu_s']:.0f} s" if "cpu_s" in r else "")}
            note = extra[st](r) if st in extra else f"{r.get('what', '')}; per iteration {r['per_iteration_s']:.1f} s; " \
                                                       f"estimate {_gb(r.get('estimate'))}"
            rows.append([st, f"{s['docs']} x {s['terms']}", r["k"], f"{r['seconds']:.1f}", _gb(r["peak_rss"]), note])
    L += ["## Generation, λ1 search, online pass, peers", "",
          *harness.md_table(["step", "N x M", "K", "seconds", "peak RSS", "notes"], rows, align="lllrrl"), ""]
    pts = batch_points(records)
    fits = []
    for K in sorted({p[3] for p in pts}):
        xy = [(p[2], p[4]) for p in pts if p[3] == K]
        f = fit_exponent(*zip(*xy)) if len(xy) > 1 else None
        if f:
            fits.append(f"K={K}: time per iteration ∝ nnz(D)^{f[0]:.2f} ({len(xy)} sizes)")
    for dm in sorted({(p[0], p[1]) for p in pts}):
        xy = [(p[3], p[4]) for p in pts if (p[0], p[1]) == dm]
        f = fit_exponent(*zip(*xy)) if len(xy) > 1 else None
        if f:
            fits.append(f"{dm[0]} x {dm[1]}: time per iteration ∝ K^{f[0]:.2f} ({len(xy)} values of K)")
    L += ["Fitted exponents (least squares on the logs; time per iteration = mean U-step + V-step over the "
          "iterations after the first): " + ("; ".join(fits) if fits else "none yet (one point per line)") + ".", "",
          f"![time per iteration]({Path(a.png).name})", "",
          "Peak RSS is each child's `VmHWM` (memory-mapped matrix pages count once read). The cores were shared "
          "with other work (several agents on this machine): wall-clock times vary between runs; the children "
          f"ran with {', '.join(sorted({str(r.get('threads')) for r in records if 'threads' in r}))} numba/BLAS "
          "threads. The memory budget of each run (90 % of the memory available at its start unless given) is in "
          "the JSON records."]
    return "\n".join(L)
