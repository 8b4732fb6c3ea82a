"""numba kernels shared by every learner: Gram-lasso coordinate descent (lasso), sparse products (products),
conversions between dense row blocks and CSR (convert), reductions and casts of dense row blocks (rows),
a cache hint the products use (hints), and the thread contexts a fit runs under (threads).
"""
