"""``rlsi transform MODEL_DIR CORPUS``: fold documents into the topic space of a saved model."""

from __future__ import annotations

import io as _io
from pathlib import Path

from ..errors import RLSIError
from . import _common, _output

FORMATS = {".tsv": "a header (id, T1 .. TK) then id and one column per topic, tab separated",
           ".npy": "array (n_docs x K), no ids"}


def register(sub):
    p = sub.add_parser("transform", help="fold documents into the topic space of a model",
                       description="Compute document vectors (ridge projection, TOIS §7) of a corpus with "
                                   "a saved model. Output: TSV (a header line 'id T1 .. TK', then id + K values "
                                   "per document; topics numbered as 'rlsi topics' numbers them) to stdout or "
                                   "-o FILE (.tsv or .npy).")
    p.add_argument("model_dir", help="model directory written by 'rlsi fit'")
    p.add_argument("corpus", help="corpus file (.jsonl / .jsonl.gz) or folder of .txt files")
    p.add_argument("-o", "--output", help="output file: .tsv or .npy (default: TSV on stdout)")
    p.add_argument("--text-fields", default="title,text", help="JSON fields forming the text")
    p.set_defaults(func=run)


def run(args):
    import numpy as np

    from ..text import read_corpus

    if args.output:
        if Path(args.output).suffix not in FORMATS:
            raise RLSIError(f"output {args.output}: unsupported extension; use one of {', '.join(FORMATS)}")
        _output.file_destination(args.output, reads=[args.model_dir, args.corpus])
    fields = _common.text_fields(args)
    model, vectorizer, _ = _common.load_model_dir(args.model_dir)
    if vectorizer is None:
        raise RLSIError(f"{args.model_dir} has no vectorizer: cannot read text")
    corpus = read_corpus(args.corpus, text_fields=fields)
    W = np.asarray(model.transform(vectorizer.transform(_common.reading(corpus.texts, args))))
    if not np.isfinite(W).all():
        raise RLSIError(f"the model in {args.model_dir} gives NaN or infinite document vectors: it is damaged; "
                        "refit it")
    n, K = W.shape
    if args.output and args.output.endswith(".npy"):
        _common.save_npy_atomic(args.output, W)
    else:
        buf = _io.StringIO()
        buf.write("\t".join(["id", *(f"T{k + 1}" for k in range(K))]) + "\n")  # topics numbered as rlsi topics
        for doc_id, row in zip(corpus.ids, W):
            buf.write(_output.printable(doc_id) + "\t" + "\t".join(f"{x:.6g}" for x in row) + "\n")
        if not args.output:
            print(buf.getvalue(), end="")
            return 0
        _common.write_text_atomic(args.output, buf.getvalue())
    if not getattr(args, "quiet", False):
        print(f"wrote the topic vectors of {n} documents ({K} topics) to {args.output}")
    return 0
