"""The arena's variants as research environments: PettingZoo and Gymnasium (``arena.env.pettingzoo``,
``arena.env.gymnasium``, the ``pettingzoo`` extra) and OpenSpiel (``arena.env.openspiel``, the ``openspiel``
extra), on one shared encoding of actions and observations (:mod:`arena.env.encoding`).

This package imports neither library: the encoding needs numpy alone, and each framework's module loads its library
through :func:`arena.env.extras.require`, which names the extra to install when it is missing.
docs/reference/environments.md documents the encodings and the environments.
"""

from arena.env.encoding import Encoding as Encoding
from arena.env.extras import MissingExtra as MissingExtra
from arena.env.extras import require as require
