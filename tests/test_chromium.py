"""Finding a Chromium: the order of the places, the errors, the version; fakes, no browser."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from dynacu_gym.errors import InfraError
from dynacu_gym.runtime import chromium
from dynacu_gym.runtime.browser import Browser
from dynacu_gym.runtime.chromium import (
    ENV_VAR,
    ChromiumNotFound,
    chromium_version,
    find_chromium,
    playwright_chromium_path,
)


def fake_browser(path: Path, version: str = "Chromium 156.0.8078.114") -> Path:
    """An executable shell script that answers ``--version`` as a Chromium does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "{version} built on Debian"\necho "wrapper noise" >&2\n')
    path.chmod(0o755)
    return path


class Places:
    """The five places, pointed into a tmp dir; each starts empty."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.bin = tmp_path / "bin"  # the only folder on PATH
        self.bin.mkdir()
        self.system = tmp_path / "usr-bin" / "chromium"
        self.playwright = tmp_path / "ms-playwright" / "chrome-linux64" / "chrome"
        self.playwright_asked = 0
        monkeypatch.setenv("PATH", str(self.bin))
        monkeypatch.delenv(ENV_VAR, raising=False)
        monkeypatch.setattr(chromium, "SYSTEM_CHROMIUM", self.system)
        monkeypatch.setattr(chromium, "playwright_chromium_path", self._ask_playwright)

    def _ask_playwright(self) -> Path:
        self.playwright_asked += 1
        return self.playwright

    def on_path(self, name: str) -> Path:
        return fake_browser(self.bin / name)


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Places:
    return Places(tmp_path, monkeypatch)


# ---- the order ----------------------------------------------------------------------------------


def test_the_variable_beats_every_other_place(places, tmp_path, monkeypatch) -> None:
    fake_browser(places.system)
    places.on_path("chromium")
    places.on_path("chromium-browser")
    fake_browser(places.playwright)
    chosen = fake_browser(tmp_path / "elsewhere" / "chrome")
    monkeypatch.setenv(ENV_VAR, str(chosen))
    assert find_chromium() == chosen


def test_the_variable_may_name_a_command_on_path(places, monkeypatch) -> None:
    fake_browser(places.system)
    chosen = places.on_path("google-chrome")
    monkeypatch.setenv(ENV_VAR, "google-chrome")
    assert find_chromium() == chosen


def test_an_empty_variable_counts_as_unset(places, monkeypatch) -> None:
    fake_browser(places.system)
    monkeypatch.setenv(ENV_VAR, "")
    assert find_chromium() == places.system


def test_usr_bin_beats_path(places) -> None:
    fake_browser(places.system)
    places.on_path("chromium")
    assert find_chromium() == places.system


def test_chromium_on_path_beats_chromium_browser(places) -> None:
    found = places.on_path("chromium")
    places.on_path("chromium-browser")
    assert find_chromium() == found


def test_chromium_browser_on_path_beats_playwright(places) -> None:
    found = places.on_path("chromium-browser")
    fake_browser(places.playwright)
    assert find_chromium() == found
    assert places.playwright_asked == 0  # its driver is started only when all else failed


def test_playwrights_chromium_comes_last(places) -> None:
    fake_browser(places.playwright)
    assert find_chromium() == places.playwright
    assert places.playwright_asked == 1


def test_nothing_is_cached_between_calls(places) -> None:
    fake_browser(places.system)
    assert find_chromium() == places.system
    places.system.unlink()
    found = places.on_path("chromium")
    assert find_chromium() == found


def test_a_non_executable_system_chromium_is_passed_over(places) -> None:
    fake_browser(places.system).chmod(0o644)
    found = places.on_path("chromium")
    assert find_chromium() == found


# ---- errors --------------------------------------------------------------------------------------


def _plain_file(tmp: Path) -> str:
    path = fake_browser(tmp / "plain")
    path.chmod(0o644)
    return str(path)


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda tmp: str(tmp / "no-such-chrome"), "does not exist"),
        (lambda tmp: str(tmp), "is a directory"),
        (_plain_file, "is not executable"),
        (lambda tmp: "no-such-command", "is no command on PATH"),
    ],
)
def test_a_wrong_variable_is_an_error_naming_it(places, tmp_path, monkeypatch, make, why) -> None:
    fake_browser(places.system)  # there, and still not used: no silent fall back
    value = make(tmp_path)
    monkeypatch.setenv(ENV_VAR, value)
    with pytest.raises(ChromiumNotFound) as caught:
        find_chromium()
    message = str(caught.value)
    assert f"${ENV_VAR}={value!r}" in message
    assert why in message
    assert caught.value.fix.startswith(f"set {ENV_VAR}")


def test_nothing_found_lists_the_five_places_in_order_and_the_installs(places) -> None:
    with pytest.raises(ChromiumNotFound) as caught:
        find_chromium()
    error = caught.value
    assert isinstance(error, InfraError)
    message = str(error)
    places_in_order = [
        f"1. ${ENV_VAR}: not set",
        f"2. {places.system}: does not exist",
        "3. `chromium` on PATH: not found",
        "4. `chromium-browser` on PATH: not found",
        f"5. Playwright's Chromium {places.playwright}: does not exist",
    ]
    positions = [message.index(place) for place in places_in_order]
    assert positions == sorted(positions)
    assert len(error.tried) == 5
    for command in (
        "apt install chromium` (Debian)",
        "apt install chromium-browser` (Ubuntu)",
        "python -m playwright install chromium",
        f"{ENV_VAR}=/path/to/chrome",
    ):
        assert command in message
    assert f"PATH={places.bin}" in message
    assert error.fix == chromium.INSTALL_HINT


def test_a_playwright_that_cannot_answer_is_one_more_miss(places, monkeypatch) -> None:
    def broken() -> Path:
        raise ImportError("No module named 'playwright'")

    monkeypatch.setattr(chromium, "playwright_chromium_path", broken)
    with pytest.raises(ChromiumNotFound) as caught:
        find_chromium()
    place, why = caught.value.tried[-1]
    assert place == "Playwright's Chromium"
    assert "No module named 'playwright'" in why


def test_the_browser_refuses_to_start_without_a_chromium(places, tmp_path) -> None:
    browser = Browser(
        tmp_path, display=":0", audio_env={}, allowed_origin="http://127.0.0.1:1",
        width=1280, height=720,
    )  # fmt: skip
    with pytest.raises(ChromiumNotFound):
        browser.start()
    assert browser._thread is None  # nothing was started


# ---- the version ---------------------------------------------------------------------------------


def test_the_version_of_a_fake(tmp_path) -> None:
    path = fake_browser(tmp_path / "chrome", "Google Chrome 120.0.6099.109")
    assert chromium_version(path) == "Google Chrome 120.0.6099.109"


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_a_failing_version_call_says_what_it_printed(tmp_path) -> None:
    path = _script(tmp_path / "chrome", 'echo "libnss3.so: cannot open" >&2\nexit 127\n')
    with pytest.raises(InfraError, match=r"exit status 127(.|\n)*libnss3\.so: cannot open"):
        chromium_version(path)


def test_a_version_call_that_prints_no_version(tmp_path) -> None:
    path = _script(tmp_path / "chrome", 'echo "hello"\n')
    with pytest.raises(InfraError, match=r"printed no version(.|\n)*hello"):
        chromium_version(path)


def test_a_version_call_that_hangs_times_out(tmp_path) -> None:
    path = _script(tmp_path / "chrome", 'echo "starting"\nexec sleep 30\n')
    with pytest.raises(InfraError, match=r"did not answer within 0.5 s(.|\n)*starting"):
        chromium_version(path, timeout=0.5)


def test_a_version_call_of_no_program(tmp_path) -> None:
    with pytest.raises(InfraError, match="cannot run"):
        chromium_version(tmp_path / "absent")


# ---- this machine --------------------------------------------------------------------------------


def test_this_machine_drives_debians_chromium(monkeypatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    found = find_chromium()
    assert found == Path("/usr/bin/chromium")
    assert chromium_version(found).startswith("Chromium ")


def test_playwright_says_where_its_chromium_goes_even_inside_an_asyncio_loop() -> None:
    async def inside_a_loop() -> Path:  # a notebook's thread: the sync API refuses to start here
        return playwright_chromium_path()

    path = asyncio.run(inside_a_loop())
    assert path.is_absolute()
    assert "ms-playwright" in path.parts or os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
