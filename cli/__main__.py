import sys

from memdeck.cli import main

sys.exit(main())
