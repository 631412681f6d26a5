"""What the analysis room's Ray tests share: a port nobody listens on, and a two-CPU Ray head in a
network namespace of its own (``nardy.testing.ray_cluster``), skipped where Ray or a namespace is
missing."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from nardy.testing.ray_cluster import LoopbackCluster, namespace_unavailable


def free_port() -> int:
    """A local port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def two_cpu_head(port: int) -> Iterator[LoopbackCluster]:
    """A module fixture's body: the head on ``port``, stopped by process id when the module ends."""
    pytest.importorskip("ray", reason="needs ray: pip install 'nardy[ray]'")
    reason = namespace_unavailable()
    if reason is not None:
        pytest.skip(reason)
    with LoopbackCluster(port) as c:
        c.add_head(num_cpus=2)
        yield c
