"""The harness's named choices, apart from the modules that act on them.

The command line offers them (``--backend``, ``--checks``, ``--step``), and ``dynacu list``
must not load the runner or the audit to build its parser.
"""

BACKENDS = ("local", "ray")  # where an evaluation's episodes run
# The audit's checks, in the order it runs and reports them.
CHECKS = ("solvable", "null", "random", "nearmiss", "evidence", "silent")
# The audit's step: an LLM agent's, a screenshot to a hosted model and back, and a short wait.
STEP_S = 10.0
VIDEO_FPS = 3.0  # a video's screen frames a second: the keyframe capture's default rate
