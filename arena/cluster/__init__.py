"""Tournaments over several machines, on an existing distributed engine (Ray): see :mod:`.ray_backend`.

Importing this package needs no Ray; using the backend does (the ``ray`` extra), and says so in one line.
"""

from .ray_backend import ClusterError as ClusterError
from .ray_backend import RayBackend as RayBackend
from .ray_backend import connect as connect
from .ray_backend import ray_backend as ray_backend
from .ray_backend import require_ray as require_ray

__all__ = ["ClusterError", "RayBackend", "connect", "ray_backend", "require_ray"]
