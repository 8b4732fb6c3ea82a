"""Helpers of the distributed tests (tests/distributed) that the tests import."""


def killing_its_worker_once(task, flag):
    """``task`` wrapped so that its first call, on whichever worker comes first (an atomic claim of the file
    ``flag``: tasks run on several workers at once), closes that worker before it can report a result; every
    other call runs ``task`` as it is."""
    import os
    import time

    def wrapped(*args, **kwargs):
        try:
            os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return task(*args, **kwargs)
        from distributed import get_worker

        worker = get_worker()
        worker.loop.add_callback(worker.close, executor_wait=False, nanny=False)
        time.sleep(2)  # the worker is gone before this attempt could report a result
        return task(*args, **kwargs)

    return wrapped
