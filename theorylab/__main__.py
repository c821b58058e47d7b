"""``python -m theorylab ...``: the command line without the installed ``theorylab`` script (a machine where the
repository is on PYTHONPATH but not pip-installed, such as a lent GPU box)."""

import sys

from theorylab.app.cli import main

sys.exit(main())
