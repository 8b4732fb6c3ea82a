"""A writer process for the kill tests: cycles through add, commit, delete, merge and model updates on a
live index forever, announcing each phase before it starts (``PHASE name``) and each acknowledged change
after its commit returned (``ACK add`` / ``ACK delete`` / ``ACK merge`` / ``ACK model N``); the ids an add
or a delete changes come with its phase (``PHASE add id,id,...``). The parent kills it with SIGKILL in a
phase and checks what survives.

Usage: python live_writer_child.py INDEX_DIR START_NUMBER
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from retrieval.live.live_helpers import fitted_models, text_of  # noqa: E402

from rlsi.retrieval.live import LiveIndex  # noqa: E402


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(path, start):
    vec, model_a, model_b = fitted_models()
    index = LiveIndex.open(path, durable=False)  # kill -9 needs no fsync: the page cache outlives the process
    n = start
    cycle = 0
    while True:
        ids = [f"k{n + i:05d}" for i in range(40)]
        n += len(ids)
        say("PHASE add " + ",".join(ids))
        index.add([text_of(d) for d in ids], ids)
        say("PHASE commit")
        index.commit()
        say("ACK add")
        gone = ids[::7]
        say("PHASE delete " + ",".join(gone))
        index.delete(gone)
        index.commit()
        say("ACK delete")
        if cycle % 2 == 1:
            say("PHASE merge")
            index.merge()
            say("ACK merge")
        if cycle % 3 == 2:
            model = model_b if index.model_version % 2 == 1 else model_a
            say("PHASE refold")
            version = index.update_model(model, vec)
            say(f"ACK model {version}")
        cycle += 1


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
