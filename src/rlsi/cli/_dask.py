"""``rlsi fit --backend dask``: the fit of ``rlsi fit`` (batch or ``--online``) on a Dask cluster.

``add_dask_arguments(parser)`` adds ``--backend {local,dask}``, ``--workers N`` (a loopback LocalCluster
started for the fit, the default), ``--scheduler tcp://HOST:PORT`` (an existing cluster),
``--scheduler-timeout``, ``--checkpoint-dir`` and ``--resume-checkpoint``; ``fit_dask(args, X)`` fits
:class:`rlsi.distributed.DaskRLSI` (or :class:`~rlsi.distributed.DaskOnlineRLSI` with ``--online``) with the
options of the local learner, prints the cluster (and its dashboard when it has one) and the bytes moved
per iteration, and returns the equivalent local model — so the model directory is the one a local fit
writes.
"""

from __future__ import annotations

import logging
import sys

from ..errors import RLSIError
from ._common import non_negative_float, positive_int

log = logging.getLogger(__name__)


def add_dask_arguments(parser):
    g = parser.add_argument_group("distributed fit (Dask; pip install \"rlsi[dask]\")")
    g.add_argument("--backend", choices=["local", "dask"], default="local",
                   help="local: this process (default); dask: documents partitioned over Dask workers")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, default=None,
                       help="dask: workers of the loopback LocalCluster started for the fit (default: 2)")
    where.add_argument("--scheduler", default=None, metavar="ADDR",
                       help="dask: address of a running scheduler, e.g. tcp://10.0.0.5:8786")
    g.add_argument("--scheduler-timeout", type=non_negative_float, default=10.0,
                   help="dask: seconds to wait for --scheduler (default: 10)")
    g.add_argument("--checkpoint-dir", default=None,
                   help="dask, batch: write U and W after every iteration to this directory")
    g.add_argument("--resume-checkpoint", action="store_true",
                   help="dask, batch: continue the fit checkpointed in --checkpoint-dir")


def fit_dask(args, X):
    """Fit on the cluster named by ``args``; returns the fitted local model (BatchRLSI / OnlineRLSI)."""
    from ..distributed import DaskOnlineRLSI, DaskRLSI, open_cluster
    from ._common import batch_model_from_args

    quiet = bool(getattr(args, "quiet", False))
    if getattr(args, "verbose", 0) < 2:  # dask's INFO lines (cluster start/stop) only with -vv
        logging.getLogger("distributed").setLevel(logging.WARNING)
    if (args.checkpoint_dir or args.resume_checkpoint) and args.online:
        raise RLSIError("--checkpoint-dir and --resume-checkpoint apply to the batch fit; drop them or --online")
    if args.resume_checkpoint and not args.checkpoint_dir:
        raise RLSIError("--resume-checkpoint needs --checkpoint-dir DIR (the folder of the checkpoints)")
    handle = open_cluster(scheduler=args.scheduler, n_workers=args.workers or 2, timeout=args.scheduler_timeout)
    try:
        n_workers = len(handle.client.scheduler_info(n_workers=-1)["workers"])
        if not quiet:
            link = handle.dashboard_link
            print(f"Dask cluster: {n_workers} worker(s) at {handle.client.scheduler.address}"
                  + (f", dashboard {link}" if link else ""), file=sys.stderr)
        if args.online:
            from ._online import online_model_from_args

            params = online_model_from_args(args, quiet=quiet).get_params(deep=False)
            model = DaskOnlineRLSI(**params, client=handle.client).fit(X)
            unit = "mini-batch"
        else:
            params = batch_model_from_args(args, quiet).get_params(deep=False)
            params.pop("executor", None)
            params["topic_representation"] = "sparse"  # CSR topic blocks cross the network
            model = DaskRLSI(**params, client=handle.client, checkpoint_dir=args.checkpoint_dir,
                             resume=args.resume_checkpoint).fit(X)
            unit = "iteration"
    finally:
        handle.close()
    moved = list(model.bytes_moved_)
    if not quiet and moved:
        print(f"moved {sum(moved) / 1e6:.2f} MB over {len(moved)} {unit}(s): {sum(moved) / len(moved) / 1e6:.3f} "
              f"MB per {unit} on average (the first includes the partitions of X)", file=sys.stderr)
    return model.to_local()
