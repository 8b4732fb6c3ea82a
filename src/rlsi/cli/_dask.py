"""``rlsi fit --backend dask``: the fit of ``rlsi fit`` (batch or ``--online``) on a Dask cluster.

``add_dask_arguments(parser)`` adds ``--backend {local,dask}``, ``--workers N`` (a loopback LocalCluster
started for the fit, the default), ``--scheduler tcp://HOST:PORT`` (an existing cluster),
``--scheduler-timeout``, ``--checkpoint-dir`` and ``--resume-checkpoint``; ``fit_dask(args, X, model)``
fits the local estimator (BatchRLSI or OnlineRLSI) on the cluster — its ``placement`` the library's Dask
placement (``get_placement("dask", client=...)``), its parameters unchanged — prints the cluster (and its
dashboard when it has one) and the bytes moved per iteration, and returns it with the local placement again,
so the model directory is the one a local fit writes. ``fit_dask_files(args, paths, fields, model)`` is the batch fit of several corpus files, read and
vectorized on the workers (:func:`rlsi.distributed.vectorize_files`): the client never holds the
documents nor X.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading

from ..errors import RLSIError
from ._bounds import local_workers
from ._common import non_negative_float

log = logging.getLogger(__name__)


def add_dask_arguments(parser):
    g = parser.add_argument_group("distributed fit (Dask; pip install \"rlsi[dask]\")")
    g.add_argument("--backend", choices=["local", "dask"], default="local",
                   help="local: this process (default); dask: documents partitioned over Dask workers")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--workers", type=local_workers, default=None,
                       help="dask: workers of the loopback LocalCluster started for the fit (default: 2)")
    where.add_argument("--scheduler", default=None, metavar="ADDR",
                       help="dask: address of a running scheduler, e.g. tcp://10.0.0.5:8786")
    g.add_argument("--scheduler-timeout", type=non_negative_float, default=10.0,
                   help="dask: seconds to wait for --scheduler (default: 10)")
    g.add_argument("--checkpoint-dir", default=None,
                   help="dask, batch: write U and W after every iteration to this directory")
    g.add_argument("--resume-checkpoint", action="store_true",
                   help="dask, batch: continue the fit checkpointed in --checkpoint-dir")


def _open(args):
    """The cluster named by ``args`` (a LocalCluster of ``--workers`` by default), announced on stderr; its
    callers have checked the places the options name (:func:`check_where`)."""
    from ..distributed import open_cluster

    if getattr(args, "verbose", 0) < 2:  # dask's INFO lines (cluster start/stop) only with -vv
        from ..distributed.cluster import import_distributed

        import_distributed()  # its import sets the "distributed" logger to INFO: lower it afterwards
        logging.getLogger("distributed").setLevel(logging.WARNING)
    handle = open_cluster(scheduler=args.scheduler, n_workers=args.workers or 2, timeout=args.scheduler_timeout)
    if not getattr(args, "quiet", False):
        n_workers = len(handle.client.nthreads())  # asked of the scheduler, not a cached identity
        link = handle.dashboard_link
        print(f"Dask cluster: {n_workers} worker(s) at {handle.client.scheduler.address}"
              + (f", dashboard {link}" if link else ""), file=sys.stderr)
    return handle


def check_where(args):
    """The options that name places (``--scheduler``, ``--checkpoint-dir``), checked before any work."""
    if args.resume_checkpoint and not args.checkpoint_dir:
        raise RLSIError("--resume-checkpoint needs --checkpoint-dir DIR (the folder of the checkpoints)")
    check_scheduler(args.scheduler)
    if args.checkpoint_dir:
        from ..distributed.checkpoint import check_directory

        check_directory(args.checkpoint_dir)


def check_scheduler(address):
    """RLSIError for a ``--scheduler`` address no Dask transport can reach (an unknown ``scheme://``, no
    host), before any connection is tried."""
    if address is None:
        return
    try:
        from distributed.comm.registry import backends
    except ImportError:  # open_cluster says how to install the Dask backend
        return

    text = str(address)
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme not in backends:
        raise RLSIError(f"--scheduler {text}: unknown protocol {scheme!r}; give tcp://HOST:PORT (or "
                        f"{', '.join(s + '://' for s in sorted(backends) if s != 'tcp')})")
    if not rest.strip():
        raise RLSIError(f"--scheduler {text}: no host; give {scheme}://HOST:PORT, e.g. {scheme}://10.0.0.5:8786")


def dask_placement(model, client, args):
    """``model`` (a local BatchRLSI or OnlineRLSI, unfitted) placed on the cluster of ``client``: the library
    turns ``--backend dask`` into its Dask placement (``rlsi.models.placement.get_placement("dask", ...)``:
    :class:`rlsi.distributed.DaskPlacement`), the estimator and its parameters stay the same. Returns
    ``(model, unit of the bytes-moved report)``; the options the Dask fit cannot run are refused first."""
    from ..models.online import OnlineRLSI
    from ..models.placement import get_placement

    online = isinstance(model, OnlineRLSI)
    if online and (args.checkpoint_dir or args.resume_checkpoint):
        raise RLSIError("--checkpoint-dir and --resume-checkpoint apply to the batch fit; drop them or --online")
    if getattr(model, "device", "cpu") not in (None, "cpu"):
        raise RLSIError(f"--backend dask does not take device={model.device!r}: the cluster's workers fit on their "
                        f"hosts; drop --device or fit on this machine")
    where = {} if online else dict(checkpoint_dir=args.checkpoint_dir, resume=bool(args.resume_checkpoint))
    placement = get_placement("dask", client=client, task_threads=model.n_jobs, **where)
    return model.set_params(placement=placement), "mini-batch" if online else "iteration"


@contextlib.contextmanager
def interruptible():
    """Ctrl-C during a Dask fit ends as ``rlsi: interrupted``: the interruption may surface as another error
    inside Dask (a worker list emptied by the shutdown, a cancelled future), which is then raised as the
    KeyboardInterrupt it is; Dask's and asyncio's shutdown messages are silenced."""
    seen = []
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum, frame):
        seen.append(signum)
        for name in ("distributed", "asyncio", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        raise KeyboardInterrupt

    # only in the main thread, and not where Ctrl-C is ignored (a background job keeps ignoring it)
    main_thread = threading.current_thread() is threading.main_thread() and previous is not signal.SIG_IGN
    if main_thread:
        signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    except BaseException as exc:
        if seen and not isinstance(exc, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        raise
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous)


def _report(args, model, unit):
    moved = list(model.bytes_moved_)
    if not getattr(args, "quiet", False) and moved:
        print(f"moved {sum(moved) / 1e6:.2f} MB over {len(moved)} {unit}(s): {sum(moved) / len(moved) / 1e6:.3f} "
              f"MB per {unit} on average (the first includes the partitions of X)", file=sys.stderr)


def fit_dask(args, X, model):
    """Fit the local estimator ``model`` (BatchRLSI / OnlineRLSI, unfitted) on the cluster named by ``args``;
    returns the fitted local model."""
    from ..distributed.cluster import lost_cluster_errors

    check_where(args)
    dask_placement(model, None, args)  # options fail before the cluster starts
    with interruptible(), lost_cluster_errors():
        handle = _open(args)
        try:
            model, unit = dask_placement(model, handle.client, args)
            model.fit(X)
        finally:
            handle.close()
            model.set_params(placement=None)  # saved and used afterwards in this process
    _report(args, model, unit)
    return model


def fit_dask_files(args, paths, fields, model):
    """The batch fit of the local estimator ``model`` (BatchRLSI, unfitted) on the corpus files ``paths``
    (JSON lines), read and vectorized on the workers. Returns ``(local model, fitted vectorizer, (n_docs,
    n_terms))``."""
    from ..distributed import vectorize_files
    from ._common import check_learnable, make_vectorizer

    if getattr(args, "backend", "local") != "dask":
        raise RLSIError(f"{len(paths)} corpus files are read on Dask workers: add --backend dask, or give one "
                        f"file (concatenate them)")
    if args.online:
        raise RLSIError("--online reads one corpus file; give one file, or drop --online for the batch fit of "
                        "several files on the Dask workers")
    from ..distributed.files import check_distinct_files

    check_distinct_files(paths)
    check_where(args)
    dask_placement(model, None, args)  # options fail before the cluster starts
    vectorizer = make_vectorizer(args)
    from ..distributed.cluster import lost_cluster_errors

    with interruptible(), lost_cluster_errors():
        handle = _open(args)
        try:
            matrix = vectorize_files(paths, vectorizer, client=handle.client, text_fields=fields)
            log.info("vectorized %d documents x %d terms (%d non-zeros) on the workers, %d file(s)",
                     *matrix.shape, matrix.nnz, len(paths))
            check_learnable(matrix, matrix.shape[0])
            model, unit = dask_placement(model, handle.client, args)
            model.fit(matrix)
            matrix.release()
        finally:
            handle.close()
            model.set_params(placement=None)  # saved and used afterwards in this process
    _report(args, model, unit)
    return model, matrix.vectorizer, matrix.shape
