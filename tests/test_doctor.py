"""dynacu doctor: passes on this machine, names the fixes on a bare one, never crashes."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from dynacu_gym.harness import doctor
from dynacu_gym.harness.doctor import Check, Part, checks, run_doctor
from dynacu_gym.runtime import chromium


@pytest.fixture
def bare_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No program on PATH, and no Chromium in any of the places the lookup tries."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv(chromium.ENV_VAR, raising=False)
    monkeypatch.setattr(chromium, "SYSTEM_CHROMIUM", tmp_path / "usr-bin-chromium")
    monkeypatch.setattr(chromium, "playwright_chromium_path", lambda: tmp_path / "pw" / "chrome")


def test_this_machine_has_every_required_part(monkeypatch) -> None:
    monkeypatch.delenv(chromium.ENV_VAR, raising=False)
    out = io.StringIO()
    assert run_doctor(out) == 0, out.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("ok    chromium ")
    assert "Chromium " in lines[0] and "(/usr/bin/chromium)" in lines[0]
    assert lines[-1].startswith("ready: all ")
    found = {c.name: c for c in checks()}
    assert not [c.name for c in found.values() if c.required and not c.ok]
    for name in ("chromium", "xvfb", "pulseaudio", "pactl", "parec", "pacat", "ffmpeg",
                 "whisper-model", "piper-voice", "py:playwright", "py:faster_whisper",
                 "py:piper", "shm", "disk"):  # fmt: skip
        assert found[name].required and found[name].ok, found[name]
    assert not found["tesseract"].required
    assert found["whisper-model"].detail.startswith("tiny.en (")
    assert Path(found["whisper-model"].detail[len("tiny.en (") : -1], "model.bin").is_file()


def test_a_bare_machine_fails_with_the_fixes(bare_machine) -> None:
    out = io.StringIO()
    assert run_doctor(out) == 1
    text = out.getvalue()
    lines = {line.split()[1]: line for line in text.splitlines()[:-1]}
    assert lines["chromium"].startswith("MISS  ")
    assert "apt install chromium` (Debian)" in lines["chromium"]
    assert "python -m playwright install chromium" in lines["chromium"]
    assert lines["xvfb"].startswith("MISS  ") and lines["xvfb"].endswith("-> apt install xvfb")
    assert lines["ffmpeg"].endswith("-> apt install ffmpeg")
    assert lines["pactl"].endswith("-> apt install pulseaudio pulseaudio-utils")
    assert lines["tesseract"].startswith("warn  ")  # optional: a warning, not a miss
    assert "needed only by dynacu audit" in lines["tesseract"]
    assert lines["py:playwright"].startswith("ok    ")  # Python packages do not use PATH
    summary = text.splitlines()[-1]
    assert summary.startswith("not ready: ")
    assert "chromium" in summary and "xvfb" in summary and "tesseract" in summary


def test_the_json_form_parses(bare_machine) -> None:
    out = io.StringIO()
    assert run_doctor(out, as_json=True) == 1
    report = json.loads(out.getvalue())
    assert report["ok"] is False
    by_name = {c["name"]: c for c in report["checks"]}
    assert set(by_name["chromium"]) == {"name", "ok", "detail", "fix", "required"}
    assert by_name["chromium"]["ok"] is False and by_name["chromium"]["required"] is True
    assert "$DYNACU_CHROMIUM: not set" in by_name["chromium"]["detail"]
    assert by_name["disk"]["ok"] is True


def test_a_wrong_variable_is_named_with_its_own_fix(bare_machine, monkeypatch) -> None:
    monkeypatch.setenv(chromium.ENV_VAR, "/no/such/chrome")
    (found,) = checks([p for p in doctor.PARTS if p.name == "chromium"])
    assert not found.ok
    assert "/no/such/chrome" in found.detail and "does not exist" in found.detail
    assert found.fix.startswith("set DYNACU_CHROMIUM")


def test_a_check_that_raises_becomes_a_failed_check(monkeypatch) -> None:
    def broken() -> str:
        raise RuntimeError("the probe itself broke")

    parts = (Part("fine", True, "nothing", lambda: "1.0"), Part("broken", True, "fix it", broken))
    assert checks(parts) == [
        Check("fine", True, "1.0", "nothing", True),
        Check("broken", False, "RuntimeError: the probe itself broke", "fix it", True),
    ]
    monkeypatch.setattr(doctor, "PARTS", parts)
    out = io.StringIO()
    assert run_doctor(out) == 1
    assert "MISS  broken  RuntimeError: the probe itself broke  -> fix it" in out.getvalue()


def test_too_little_free_space_is_a_miss(tmp_path) -> None:
    look = doctor._free_space(tmp_path / "not" / "yet", 1 << 60, "a test")
    (found,) = checks([Part("disk", True, "free some", look)])
    assert not found.ok
    assert f"free at {tmp_path} (a test;" in found.detail


def test_the_subcommand_registers(capsys, bare_machine) -> None:
    parser = argparse.ArgumentParser(prog="dynacu")
    doctor.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["doctor", "--json"])
    assert args.func(args) == 1
    assert json.loads(capsys.readouterr().out)["ok"] is False
