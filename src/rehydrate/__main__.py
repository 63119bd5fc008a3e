import sys

from rehydrate.cli import main

sys.exit(main())
