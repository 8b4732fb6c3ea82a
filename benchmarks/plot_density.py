"""The PNG of the density sweep from the JSON files of one or more ``bench_batch.py --sweep-avgcomp`` runs
(e.g. a float64 and a float32 run made side by side): seconds per iteration against AvgComp, BatchRLSI
and NMF(mu), one line per dtype.

    python benchmarks/plot_density.py OUT.png RUN1.json [RUN2.json ...] [--ylabel TEXT]

Where runs repeat a key (NMF(mu) of one dtype in two runs), the later run's value is plotted.
"""
import json
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_batch  # noqa: E402


def main(out, paths, ylabel="CPU seconds per iteration (1 thread)"):
    res, corpus = {}, None
    for path in paths:
        data = json.loads(Path(path).read_text())
        for key, value in data["results"].items():
            dtype = value.get("dtype") if value else None
            res[f"{key} [{dtype}]"] = value  # the runs' keys repeat (one run per dtype)
        corpus = corpus or data.get("corpus")
    first = json.loads(Path(paths[0]).read_text())["results"]
    r = next(v for k, v in first.items() if k.startswith("rlsi") and v and "N" in v)
    args = SimpleNamespace(docs=r["N"], terms=r["M"], k=r["K"])
    bench_batch.plot_sweep(res, args, out, ylabel)
    print(f"wrote {out} ({corpus})")


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    argv = sys.argv[1:]
    label = {}
    if "--ylabel" in argv:
        i = argv.index("--ylabel")
        label = {"ylabel": argv[i + 1]}
        del argv[i:i + 2]
    main(argv[0], argv[1:], **label)
