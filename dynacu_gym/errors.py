"""Every error dynacu-gym raises, under one base: ``except DynaCUError`` catches them all.

Bad arguments to a function are ``ValueError`` or ``TypeError`` as in Gymnasium; the errors
below are the package's own, each also a ``ValueError`` or ``RuntimeError`` so that code
written against those keeps working. They are defined here and re-exported where they belong
(``dynacu_gym.actions.ActionError``, ``dynacu_gym.tasks.TaskFormatError``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class DynaCUError(Exception):
    """The base of every error of dynacu-gym (and of its agents' model errors)."""


class InfraError(DynaCUError, RuntimeError):
    """A part of the sandbox (display, audio daemon, browser, server) failed.

    Infrastructure failures are never the agent's fault: the env ends the episode with
    ``truncated=True`` and ``info["infra_error"]``, and the next ``reset()`` rebuilds the part.
    """


class BrowserCrashed(InfraError):
    """The browser, its page or its driver died."""


class ActionError(DynaCUError, ValueError):
    """An action that cannot be performed as given (an agent mistake, never a crash)."""


class TaskFormatError(DynaCUError, ValueError):
    """A task file that does not follow the task format."""


class AudioNotRendered(TaskFormatError):
    """A task's audio is missing or was rendered from a different script."""


class ModeUnavailableError(DynaCUError, ValueError):
    """A mode whose channels this version of dynacu-gym does not provide."""


class ClipWeightsError(DynaCUError, ValueError):
    """The CLIP gate's weights could not be found or loaded (nothing is downloaded)."""


class AuditError(DynaCUError, RuntimeError):
    """The audit cannot run here (a missing tool, an unusable output folder)."""


class AgentFailure(DynaCUError, RuntimeError):
    """The agent cannot go on: its model server refused a request, say (HTTP 400, 401, 413).

    Raised from an agent's ``act``, it ends the episode as the agent's failure (result
    ``"agent_failure"``, the message kept), never as an infrastructure fault: running the
    episode again would only meet the same refusal.

    Attributes:
        info: the step's agent info so far (``calls``, tokens, ``latency_s``), counted into
            the episode's totals.
    """

    def __init__(self, message: str, info: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.info = dict(info or {})
