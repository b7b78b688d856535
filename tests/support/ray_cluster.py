"""A Ray cluster on this machine (``ray.cluster_utils.Cluster``), the test process its driver: what the cluster
backend's tests, the ladder's on Ray among them (tests/cluster/test_ray.py), start. Import it only after
``pytest.importorskip("ray")``."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Mapping

NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
"""One node's resources: a CPU (the machine has two) and a small object store."""
HEAD = {**NODE, "include_dashboard": False,
        # A lost node is noticed in about a second (the default takes about fifteen).
        "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 2,
                           "health_check_initial_delay_ms": 0}}


@contextlib.contextmanager
def local_cluster(nodes: int, env: Mapping[str, str] | None = None) -> Iterator[Any]:
    """A head and ``nodes`` more nodes (each with ``env`` in its environment), connected as this process's
    driver; shut down, driver and nodes, at the end."""
    import ray
    from ray.cluster_utils import Cluster

    from arena.cluster import connect

    extra = {"env_vars": dict(env)} if env else {}
    started = Cluster(initialize_head=True, head_node_args={**HEAD, **extra})
    try:
        for _ in range(nodes):
            started.add_node(**NODE, **extra)
        connect(started.address)
        started.wait_for_nodes()
        yield started
    finally:
        ray.shutdown()
        started.shutdown()
