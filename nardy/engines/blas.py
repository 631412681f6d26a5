"""Single-threaded BLAS for the engines, asked for before numpy is first imported: a module that
uses numpy for a net or a batch imports this one first (``# isort: skip``).

Sets ``OPENBLAS_NUM_THREADS`` and friends (unless already set), which counts only if numpy is not
imported yet: a decision multiplies matrices of a few hundred rows, where waking BLAS threads costs
more than the product (measured: 8 ms instead of 0.6 ms for a 100-play backgammon decision on two
busy cores; ``benchmarks/test_neural.py``). Only the modules that use numpy import this, so that
importing :mod:`nardy.bots` or :mod:`nardy.engines` leaves a program's own numpy alone.
"""

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
