"""Moved to :mod:`dynacu_gym.harness.cli`; this name keeps old imports and ``python -m`` working.

Imported, it is the same module object, so what a test or a user patches here is patched there.
"""

import sys

from dynacu_gym.harness import cli

if __name__ == "__main__":  # python -m dynacu_gym.cli, as before the move
    sys.exit(cli.main())
sys.modules[__name__] = cli
