"""The page elements channel: what is on screen and usable, as a numbered list.

The reference interface gives the model, beside the screenshot, the elements a person could see
and use on screen: each visible link, button, input, select, checkbox and editable region, and
the text blocks near them, with a number, a role, its text or label, its value and state, and
its box and centre in screen pixels. Small and text-only models need it to act at all.

The list is read from the live page in the same instant as the step's screenshot (see
:mod:`dynacu_gym.runtime.elements`) and shows nothing the screen does not: no hidden, covered
or off-screen element, no attribute text, nothing between steps (the keyframes' job) and
nothing said (audio never reaches the page's elements). ``click [n]`` clicks the centre of
element ``n`` of the latest list.

Adds ``elements`` (Text: the list as the record shows it) to the observation, the record's
``[PAGE ELEMENTS]`` section, and to ``info``: ``elements`` (the list as dicts, see
:class:`~dynacu_gym.runtime.elements.PageElement`) and ``elements_truncated`` (how many more
were on screen than the list holds).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium import spaces

from dynacu_gym.actions import MAX_ELEMENTS, TEXT_CHARSET, to_charset
from dynacu_gym.env import DynaCUEnv
from dynacu_gym.record import render_record
from dynacu_gym.runtime.elements import MAX_ELEMENT_TEXT, PageElement

# The elements Text's bound: every element at its longest, with its numbers and states.
MAX_ELEMENTS_CHARS = MAX_ELEMENTS * (3 * MAX_ELEMENT_TEXT + 120) + 200
HEADING = "[PAGE ELEMENTS — on screen now; click [n] clicks an element's centre]"


class PageElements(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Adds ``elements``: the page's visible, usable elements at the step's screenshot.

    Args:
        env: a DynaCU env (any wrapper of one).
        max_items: the most elements one list holds (the first in document order); past it
            the list says how many more there were.
    """

    def __init__(self, env: gym.Env, max_items: int = MAX_ELEMENTS) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, max_items=max_items)
        gym.Wrapper.__init__(self, env)
        if not isinstance(env.unwrapped, DynaCUEnv):
            raise TypeError(f"PageElements wraps a DynaCU env, got {type(env.unwrapped).__name__}")
        if isinstance(max_items, bool) or not isinstance(max_items, int):
            raise TypeError(f"expected max_items as an integer, got {max_items!r}")
        if not 1 <= max_items <= MAX_ELEMENTS:
            raise ValueError(f"expected 1 <= max_items <= {MAX_ELEMENTS}, got {max_items!r}")
        self.base: DynaCUEnv = env.unwrapped
        self.base.enable_elements(max_items)
        self.observation_space = spaces.Dict(
            {
                **env.observation_space.spaces,  # type: ignore[attr-defined]
                "elements": spaces.Text(MAX_ELEMENTS_CHARS, min_length=0, charset=TEXT_CHARSET),
            }
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env; the first list is the page's at its first screenshot."""
        obs, info = self.env.reset(seed=seed, options=options)
        return self._observe(obs, info)

    def step(self, action: Any):
        """Step the env (which resolves ``click [n]`` on the latest list), then list anew."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        obs, info = self._observe(obs, info)
        return obs, reward, terminated, truncated, info

    def _observe(self, obs: dict[str, Any], info: dict[str, Any]):
        elements, more = self.base.elements, self.base.elements_truncated
        text = to_charset(format_elements(elements, more), MAX_ELEMENTS_CHARS)
        parts = info["record_parts"].with_section("elements", f"{HEADING}\n{text}")
        obs = {**obs, "elements": text, "record": render_record(parts)}
        info = {
            **info,
            "record_parts": parts,
            "elements": [e.to_dict() for e in elements],
            "elements_truncated": more,
        }
        return obs, info


def format_element(element: PageElement) -> str:
    """One element as a line of the list: ``[3] button "Join" at 640,400 (box ...) focused``."""
    parts = [f"[{element.index}] {element.role}"]
    if element.text:
        parts.append(_quote(element.text))
    if element.label:
        parts.append(f"label={_quote(element.label)}")
    if element.value:
        parts.append(f"value={_quote(element.value)}")
    x, y = element.center
    bx, by, bw, bh = element.box
    parts.append(f"at {x},{y} (box {bx},{by} {bw}x{bh})")
    parts.extend(element.states)
    return " ".join(parts)


def format_elements(elements: list[PageElement], more: int = 0) -> str:
    """The list as the record's section and the ``elements`` observation show it."""
    if not elements:
        return "  (nothing on screen to list)"
    lines = [f"  {format_element(e)}" for e in elements]
    if more:
        lines.append(f"  ({more} more on screen, not listed)")
    return "\n".join(lines)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
