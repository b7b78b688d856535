"""Tournaments: schedules, runs, standings and ratings."""

import os

# One BLAS thread for numpy unless the operator says otherwise (OpenBLAS reads it once, when numpy is first
# imported, which is why it is set here, before any module of the package imports numpy). The leaderboard's fit
# (likelihood.py) runs on a worker thread beside the ladder on a shared machine, where OpenBLAS's own threads
# spin-wait: on this 2-core machine under load, a 1,000-entrant fit took a median 1.04 s with two BLAS threads and
# 0.49 s with one (a 200-entrant fit: 0.053 s and 0.017 s).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
