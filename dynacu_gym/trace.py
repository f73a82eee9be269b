"""Moved to :mod:`dynacu_gym.harness.trace`; this name keeps old imports working.

It is the same module object, so what a test or a user patches here is patched there.
"""

import sys

from dynacu_gym.harness import trace

sys.modules[__name__] = trace
