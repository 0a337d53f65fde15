"""``python -m controller.cli``: the same as the installed ``mjtable`` command."""

import sys

from controller.cli import main

sys.exit(main())
