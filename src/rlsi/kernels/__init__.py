"""numba kernels shared by every learner: Gram-lasso coordinate descent (lasso), sparse products (products),
conversions between dense row blocks and CSR (convert), reductions and casts of dense row blocks (rows),
and a cache hint the products use (hints).

numba's OpenMP threading layer lets idle workers spin between parallel regions by default; RLSI
alternates short parallel kernels with BLAS calls, so spinning workers steal the cores BLAS needs
(measured: a small online ``partial_fit`` took 31 ms instead of 1.1 ms). Workers therefore sleep when
idle unless the user has chosen otherwise (set before any parallel region starts the runtime).
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
