"""The page's elements as a person sees them: read from the live page beside each screenshot.

``page_elements.js`` (beside this file) runs in the page in one round trip and returns what is
on screen and usable at that instant: interactive elements and the rendered text blocks near
them, each with its box and a point to click, in the screen pixels ``click`` takes. Hidden,
zero-sized, off-screen, transparent, clipped and covered elements are left out, and text is
what is rendered, not attributes (see the script's header). The env reads it while it grabs
the screenshot (:meth:`DynaCUEnv._grab_screenshot`); the elements channel
(:mod:`dynacu_gym.wrappers.elements`) shows it to the agent.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dynacu_gym.actions import MAX_ELEMENTS, SCREEN_HEIGHT, SCREEN_WIDTH
from dynacu_gym.runtime.process import InfraError

ELEMENTS_SCRIPT = (Path(__file__).with_name("page_elements.js")).read_text()
# Every page gets the script as a function of its own before its first line runs, so that a
# listing sends a call of a few bytes, not the script. The answer comes back as JSON text:
# Playwright's own serialisation of the nested list took ~22 ms more on a page of 55 elements.
ELEMENTS_INIT_SCRIPT = (
    f'Object.defineProperty(window, "__dynacuElements", {{value: ({ELEMENTS_SCRIPT.strip()})}});'
)
LIST_ELEMENTS = "(options) => JSON.stringify(window.__dynacuElements(options))"
MAX_ELEMENT_TEXT = 200  # characters of one element's text, label or value (then clipped with …)
STATES = ("focused", "disabled", "checked", "unchecked", "expanded", "collapsed", "pressed",
          "selected")  # fmt: skip


@dataclass(frozen=True)
class PageElement:
    """One element on screen.

    Attributes:
        index: its number in the list, from 1 (``click [index]`` clicks it).
        role: ``button``, ``link``, ``textbox``, ``checkbox``, ``radio``, ``combobox`` (a
            select), ``slider``, ``editable`` (contenteditable), ``clickable`` (anything the page
            listens to for clicks), an ARIA role it declares, or ``text`` (a block of text).
        text: its rendered text, whitespace collapsed, clipped to :data:`MAX_ELEMENT_TEXT`.
        label: for a control with no text of its own: its placeholder, or the name of the icon
            it shows (aria-label or title); else "".
        value: an input's value (dots for a password), a select's chosen option, a slider's
            value; else "".
        states: any of :data:`STATES` that hold.
        box: (x, y, width, height) of its visible part in screen pixels.
        center: (x, y) of a point of it nothing covers: where ``click [index]`` clicks.
    """

    index: int
    role: str
    text: str
    label: str
    value: str
    states: tuple[str, ...]
    box: tuple[int, int, int, int]
    center: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``info["elements"]``)."""
        return asdict(self)


def element_options(max_items: int = MAX_ELEMENTS) -> dict[str, int]:
    """The script's argument."""
    return {"maxItems": max_items, "maxText": MAX_ELEMENT_TEXT}


def parse_elements(raw: Any) -> tuple[list[PageElement], int]:
    """The script's answer as elements, and how many more it left out past the limit.

    Raises:
        InfraError: the answer is not what the script returns (a page that replaced the
            browser's own functions, say).
    """
    try:
        raw = json.loads(raw) if isinstance(raw, str) else raw
        items, truncated = raw["items"], int(raw["truncated"])
        elements = [
            PageElement(
                index=i,
                role=str(item["role"]),
                text=str(item["text"]),
                label=str(item["label"]),
                value=str(item["value"]),
                states=tuple(str(s) for s in item["states"]),
                box=tuple(int(round(v)) for v in item["box"]),  # type: ignore[arg-type]
                center=(
                    min(max(int(item["center"][0]), 0), SCREEN_WIDTH - 1),
                    min(max(int(item["center"][1]), 0), SCREEN_HEIGHT - 1),
                ),
            )
            for i, item in enumerate(items, start=1)
        ]
    except (KeyError, TypeError, ValueError, IndexError) as e:  # JSONDecodeError is a ValueError
        raise InfraError(f"the page's element list came back malformed: {e!r}") from e
    return elements, truncated
