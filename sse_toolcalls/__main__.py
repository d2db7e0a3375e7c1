"""``python -m sse_toolcalls``: the command line."""

import sys

from .tooling.cli import main

sys.exit(main())
