import sys

from corral.cli import main

sys.exit(main())
