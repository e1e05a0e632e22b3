"""python -m opverify_runtime.lint FILE [--json] [--non-compute]: the same as `opverify lint`."""
import sys

from .text import main

sys.exit(main())
