"""``python -m arena.cli`` is the ``arena`` command too (as it was when the command line was one module)."""

import sys

from arena.cli import main

sys.exit(main())
