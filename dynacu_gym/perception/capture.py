"""Moved to :mod:`dynacu_gym.runtime.speaker` (a process of the sandbox, not a model).

This name keeps old imports working: it is the same module object.
"""

import sys

from dynacu_gym.runtime import speaker

sys.modules[__name__] = speaker
