"""``python -m sse_toolcalls``: the command line."""

import sys

from .cli import main

sys.exit(main())
