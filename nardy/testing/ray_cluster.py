"""A private Ray cluster on 127.0.0.1, for the tests and benchmarks that need a real one.

Ray advertises the machine's interface address even when told ``--node-ip-address 127.0.0.1``, so
the cluster lives in a network namespace of its own where loopback is the only interface
(``unshare --net``, which needs root). Every Ray node is a ``ray start --block`` process in a
session of its own, stopped by its process id (SIGTERM, then SIGKILL): never ``ray stop``, which
would stop every Ray process on the machine.

From a test, where the driver runs commands inside the namespace (``nsenter``)::

    with LoopbackCluster(port=6390) as cluster:
        cluster.add_head(num_cpus=1)
        cluster.add_node(num_cpus=1)
        cluster.run([sys.executable, "-m", "nardy", ...], timeout=180)

From a benchmark script, which moves itself into a namespace first (:func:`rerun_in_namespace`)
and then runs its Ray driver in-process: ``LoopbackCluster(port, namespace=False)``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

BIN = Path(sys.executable).parent
"""Where this interpreter's ``ray`` command is."""
INSIDE = "NARDY_RAY_NETNS"
"""Set in the environment of a script re-run inside a namespace by :func:`rerun_in_namespace`."""
RAY_ENV: Mapping[str, str] = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_DISABLE_DOCKER_CPU_WARNING": "1",
    # A private loopback cluster: no token (a ~/.ray/auth_token left by some local ray.init()
    # would turn it on for `ray start` but not for a driver that connects).
    "RAY_AUTH_MODE": "disabled",
}
_UP = "ip link set lo up"


def namespace_unavailable() -> str | None:
    """Why a network namespace cannot be made here (for a test's skip reason), or None."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the test cluster runs in a network namespace of its own, which needs root"
    if not all(shutil.which(tool) for tool in ("unshare", "nsenter", "ip")):
        return "needs unshare, nsenter (util-linux) and ip (iproute2)"
    return None


def rerun_in_namespace() -> None:
    """Run this script again inside a fresh network namespace and exit with its status.

    Returns at once (and the script goes on where it is) when it already runs inside one, or when
    no namespace can be made (not root): the cluster then binds the machine's interfaces.
    """
    if os.environ.get(INSIDE) is not None or namespace_unavailable() is not None:
        return
    script = " ".join(f"'{arg}'" for arg in [sys.executable, *sys.argv])
    command = ["unshare", "--net", "--", "sh", "-c", f"{_UP} && exec {script}"]
    sys.exit(subprocess.call(command, env={**os.environ, INSIDE: "1"}))


class LoopbackCluster:
    """A head and worker nodes on 127.0.0.1 (see the module doc); a context manager that stops
    them all, and the namespace, on exit."""

    def __init__(
        self,
        port: int,
        *,
        namespace: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.port = port
        self.address = f"127.0.0.1:{port}"
        self.env: dict[str, str] = {**os.environ, **RAY_ENV, **(env or {})}
        self.nodes: list[subprocess.Popen[bytes]] = []
        """The nodes' ``ray start --block`` processes, the head first."""
        self._namespace = namespace
        self._netns: subprocess.Popen[bytes] | None = None
        self._temp = ""

    def __enter__(self) -> LoopbackCluster:
        if self._namespace:
            self._netns = subprocess.Popen(
                ["unshare", "--net", "--", "sh", "-c", f"{_UP} && exec sleep 100000"],
                start_new_session=True,
            )
            time.sleep(0.2)  # the namespace's loopback is up once sh has exec'd sleep
        self._temp = tempfile.mkdtemp(prefix="nardy-ray-", dir="/tmp")  # short: socket paths
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def enter(self) -> list[str]:
        """The command prefix that runs a command inside the namespace (empty without one)."""
        if self._netns is None:
            return []
        return ["nsenter", f"--net=/proc/{self._netns.pid}/ns/net", "--"]

    def start(self, args: Sequence[str], **kw: Any) -> subprocess.Popen[bytes]:
        """Start a command inside the namespace, in a session of its own."""
        return subprocess.Popen([*self.enter, *args], env=self.env, start_new_session=True, **kw)

    def run(self, args: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
        """Run a command inside the namespace to its end; its output captured as text."""
        return subprocess.run(
            [*self.enter, *args], env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def add_head(self, num_cpus: int, *extra: str, timeout: float = 60) -> subprocess.Popen[bytes]:
        """Start the head node and wait until its control store answers a health check."""
        head = self._ray_start(
            "--head",
            "--port",
            str(self.port),
            "--include-dashboard=false",
            "--disable-usage-stats",
            "--temp-dir",
            self._temp,
            "--num-cpus",
            str(num_cpus),
            *extra,
        )
        deadline = time.monotonic() + timeout
        health = [str(BIN / "ray"), "health-check", "--address", self.address]
        while self.run(health, timeout).returncode != 0:
            if head.poll() is not None:
                raise RuntimeError("the Ray head exited")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Ray head did not answer within {timeout:.0f} s")
            time.sleep(0.5)
        return head

    def add_node(self, num_cpus: int, *extra: str) -> subprocess.Popen[bytes]:
        """Start a worker node that joins the head (it may take seconds to show its CPUs)."""
        return self._ray_start("--address", self.address, "--num-cpus", str(num_cpus), *extra)

    def wait_for_cpus(self, cpus: int, timeout: float = 60) -> None:
        """Wait until the cluster shows ``cpus`` CPUs (a driver inside the namespace asks)."""
        check = (
            "import ray, sys, time\n"
            f"ray.init(address={self.address!r}, logging_level='WARNING')\n"
            f"deadline = time.time() + {timeout}\n"
            f"while ray.cluster_resources().get('CPU', 0) < {cpus} and time.time() < deadline:\n"
            "    time.sleep(0.2)\n"
            f"sys.exit(0 if ray.cluster_resources().get('CPU', 0) >= {cpus} else 1)\n"
        )
        done = self.run([sys.executable, "-c", check], timeout + 30)
        if done.returncode != 0:
            raise RuntimeError(f"the cluster did not reach {cpus} CPUs: {done.stderr[-2000:]}")

    def _ray_start(self, *args: str) -> subprocess.Popen[bytes]:
        common = ["--block", "--node-ip-address", "127.0.0.1"]
        node = self.start(
            [str(BIN / "ray"), "start", *common, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.nodes.append(node)
        return node

    def close(self) -> None:
        """Stop every node by its process id (the head last), then the namespace."""
        for node in reversed(self.nodes):
            stop(node)
        self.nodes.clear()
        if self._netns is not None:
            self._netns.kill()
            self._netns.wait()
            self._netns = None
        if self._temp:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = ""


def stop(process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """SIGTERM a process we started (``ray start --block`` then stops its node's processes),
    SIGKILL it if it has not exited within ``timeout`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
