"""``python -m cli``: the same as the installed ``mjtable`` command."""

import sys

from cli import main

sys.exit(main())
