"""What a listening page hears of each answer form, said in the agent's voice.

For a task whose solution speaks, every accepted form and every near miss of each field the
page hears is said as the solution would say it (its ``speak`` step with the form in place of
``{answer.FIELD}``; the bare form where no step names the field), by the speak channel's voice,
into a real sandbox's microphone. A page of the runtime's own (``/shared/mic-check.html``)
listens with ``ctx.listen``, the path every listening app uses: Chromium's capture, the page's
utterance detection, the upload, and the task server's recogniser (the task's
``listen_model``). The text heard is judged as the page judges it
(:func:`~dynacu_gym.tasks.answers.spoken_verdict`). One sandbox per variant; each form takes
its own length plus about two seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dynacu_gym.actions import parse_action, validate_action
from dynacu_gym.errors import InfraError
from dynacu_gym.tasks import TaskSpec
from dynacu_gym.tasks.answers import spoken_verdict

MIC_CHECK_PAGE = "/shared/mic-check.html"

if TYPE_CHECKING:
    from dynacu_gym.env import DynaCUEnv
    from dynacu_gym.wrappers.speech import Speech

# After the words end: the page ends an utterance after 0.9 s of silence, then uploads it.
_QUIET_S = 1.0
_HEARD_TIMEOUT_S = 12.0


@dataclass(frozen=True)
class Heard:
    """One form said into the page's microphone.

    Attributes:
        variant: the task variant (0: the benchmark's).
        field: the answer field.
        form: the form of the answer.
        want: ``"accepted"`` for an accepted form, ``"rejected"`` for a near miss.
        said: the sentence said.
        heard: what the page's recogniser made of it ("" for nothing).
        verdict: the verdict the page reaches on ``heard``: ``"accepted"``, ``"rejected"`` or
            None (no answer in it).
    """

    variant: int
    field: str
    form: str
    want: str
    said: str
    heard: str
    verdict: str | None

    @property
    def ok(self) -> bool:
        """Whether the page would judge the form as what it is."""
        return self.verdict == self.want

    @property
    def unheard_near_miss(self) -> bool:
        """A near miss the page finds no answer in: it fails the agent, only not by name."""
        return self.want == "rejected" and self.verdict is None


def sentences(task: TaskSpec) -> Iterator[tuple[str, str, str, str]]:
    """(field, form, want, sentence) for every form of every field the page hears.

    A field the solution types or clicks is not heard; one it speaks is said in its ``speak``
    step's sentence; one no step names (another branch of the talk) is said as it is.
    """
    for name, spec in task.answers.items():
        token = "{answer." + name + "}"
        naming = [i for i, step in enumerate(task.solution) if token in step.action]
        spoken = [i for i in naming if task.solution[i].speaks]
        if naming and not spoken:
            continue
        forms = [(f, "accepted") for f in spec.accept] + [(f, "rejected") for f in spec.reject]
        for form, want in forms:
            said = form
            if spoken:
                step = spoken[0]
                put = _without_repeat(form, task.solution[step].action.split(token, 1)[1])
                action = task.solution_actions({name: put})[step]
                said = validate_action(parse_action(action)).text or form
            yield name, form, want, said


def _without_repeat(form: str, after: str) -> str:
    """The form without its last word where the sentence says that word next.

    A form that carries its unit ("twenty-seven dollars") in a sentence that adds it ("{answer}
    dollars per user") is said once: "twenty-seven dollars per user", not "dollars dollars".
    """
    words, following = form.split(), after.split()
    if len(words) > 1 and following:
        if words[-1].lower() == following[0].strip(".,;:!?\"'").lower():
            return " ".join(words[:-1])
    return form


def hear_forms(
    variants: list[TaskSpec], progress: Callable[[Heard], None] | None = None
) -> list[Heard]:
    """Say every form of each variant into a listening page; what was heard of each.

    Args:
        variants: the variants of one task, each judged with its own answers and recogniser.
        progress: called with each form once heard.

    Raises:
        InfraError: the sandbox, the page or the voice failed.
    """
    from dynacu_gym.env import DynaCUEnv
    from dynacu_gym.wrappers.speech import Speech

    results = []
    for variant in variants:
        speech = Speech(DynaCUEnv(variant))
        try:
            speech.reset(seed=0)
            listen = _open_mic_check(speech.base)
            for name, form, want, said in sentences(variant):
                heard = listen(speech, said)
                spec = variant.answers[name]
                verdict = spoken_verdict(spec.kind, spec.accept, spec.reject, heard)
                results.append(Heard(variant.variant, name, form, want, said, heard, verdict))
                if progress is not None:
                    progress(results[-1])
        finally:
            speech.close()
    return results


def _open_mic_check(env: DynaCUEnv) -> Callable[[Speech, str], str]:
    """Load the microphone check page in ``env``'s sandbox; a function that says and hears."""
    sandbox = env.sandbox
    if sandbox is None:
        raise InfraError("the env has no sandbox after reset")
    browser = sandbox.browser_or_raise()
    server = sandbox.server
    browser.goto(server.origin + MIC_CHECK_PAGE)
    browser.wait_for_page_ready("the microphone check page", env.ready_timeout_s)
    browser.evaluate("() => window.DynaCU.start()")
    browser.wait_for_function("() => window.DynaCU.mic !== null", timeout=10)

    def listen(speech: Speech, text: str) -> str:
        before = len(server.heard)
        utterance = speech.output.say(text)
        utterance.scheduled.wait(10)
        if utterance.error:
            raise InfraError(f"the voice could not say {text!r}: {utterance.error}")
        end = speech.output.estimate_end(utterance)
        while time.monotonic() < end + _QUIET_S:
            time.sleep(0.05)
        deadline = end + _HEARD_TIMEOUT_S
        while time.monotonic() < deadline:
            speaking, sent, answered, errors = browser.evaluate(
                "() => { const m = window.DynaCU.mic; "
                "return [m.speaking, m.utterances, m.heard.length, window.DynaCU.errors]; }"
            )
            if errors:
                raise InfraError(f"the microphone check page: {errors[-1]}")
            if not speaking and sent == answered and len(server.heard) > before:
                break
            time.sleep(0.1)
        return " ".join(t for t in server.heard[before:] if t).strip()

    return listen
