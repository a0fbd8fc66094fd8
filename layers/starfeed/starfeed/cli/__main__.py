import sys

from starfeed.cli import main

sys.exit(main())
