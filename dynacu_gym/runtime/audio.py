"""The env's own PulseAudio daemon: a speaker the page plays into and a microphone it records."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from dynacu_gym.runtime.process import ChildProcess, InfraError, wait_until

SPEAKER_SINK = "dynacu_speaker"
MIC_SINK = "dynacu_mic_sink"
MIC_SOURCE = "dynacu_mic"


class AudioServer:
    """A PulseAudio daemon in its own runtime directory, one per sandbox.

    Separate daemons isolate parallel envs completely: nothing one page plays can reach another
    env's capture. The daemon runs in the foreground as our child with ``-n`` (no default.pa:
    no suspend-on-idle, no state that persists across episodes) and a script that creates:

    - ``dynacu_speaker``: a null sink, the default sink; its monitor is what the page plays.
    - ``dynacu_mic_sink``: a null sink that speech is written into.
    - ``dynacu_mic``: a remap of the mic sink's monitor, the default source the page records.
    """

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.dir = workdir / "pulse"
        self.socket = self.dir / "native"
        self._proc: ChildProcess | None = None

    @property
    def server(self) -> str:
        """The ``PULSE_SERVER`` value clients of this daemon use."""
        return f"unix:{self.socket}"

    def client_env(self) -> dict[str, str]:
        """Environment for a client process (Chromium, parec, pacat) of this daemon only."""
        env = dict(os.environ)
        env["PULSE_SERVER"] = self.server
        # Keep clients away from any cookie or config of a desktop session on the host.
        env["PULSE_COOKIE"] = str(self.dir / "cookie")
        env.pop("PULSE_SINK", None)
        env.pop("PULSE_SOURCE", None)
        return env

    def start(self, timeout: float = 10.0) -> None:
        """Start the daemon and wait until its devices exist."""
        if shutil.which("pulseaudio") is None or shutil.which("pactl") is None:
            raise InfraError(
                "PulseAudio is not installed; run `make setup` "
                "(apt-get install pulseaudio pulseaudio-utils)"
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.socket.exists():
            self.socket.unlink()
        script = self.dir / "dynacu.pa"
        script.write_text(
            f"load-module module-native-protocol-unix auth-anonymous=1 socket={self.socket}\n"
            f"load-module module-null-sink sink_name={SPEAKER_SINK} "
            "sink_properties=device.description=DynaCU-Speaker\n"
            f"load-module module-null-sink sink_name={MIC_SINK} "
            "sink_properties=device.description=DynaCU-Mic-Input\n"
            f"load-module module-remap-source source_name={MIC_SOURCE} "
            f"master={MIC_SINK}.monitor source_properties=device.description=DynaCU-Mic\n"
            f"set-default-sink {SPEAKER_SINK}\n"
            f"set-default-source {MIC_SOURCE}\n"
        )
        env = dict(os.environ)
        for var in ("HOME", "XDG_RUNTIME_DIR", "PULSE_RUNTIME_PATH", "PULSE_STATE_PATH"):
            env[var] = str(self.dir)
        env.pop("PULSE_SERVER", None)
        self._proc = ChildProcess(
            "pulseaudio",
            [
                "pulseaudio",
                "--daemonize=no",
                "--system=false",
                "--exit-idle-time=-1",
                "--disallow-exit",
                "--use-pid-file=no",
                "--log-target=stderr",
                "-n",
                "-F",
                str(script),
            ],
            log_path=self.workdir / "pulseaudio.log",
            env=env,
        )
        if not wait_until(lambda: not self.alive() or self._has_devices(), timeout, 0.05):
            tail = self._proc.log_tail()
            self.stop()
            raise InfraError(f"PulseAudio did not come up within {timeout:.0f} s: {tail}")
        if not self.alive():
            tail = self._proc.log_tail()
            self.stop()
            raise InfraError(f"PulseAudio exited at start: {tail}")

    def _has_devices(self) -> bool:
        if not self.socket.exists():
            return False
        out = self.pactl("list", "short", "sources", check=False)
        return f"{MIC_SOURCE}\t" in out and f"{SPEAKER_SINK}.monitor" in out

    def pactl(self, *args: str, check: bool = True) -> str:
        """Run ``pactl`` against this daemon and return its stdout."""
        result = subprocess.run(
            ["pactl", *args],
            env=self.client_env(),
            capture_output=True,
            text=True,
            timeout=10,
        )
        if check and result.returncode != 0:
            raise InfraError(f"pactl {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def alive(self) -> bool:
        """Whether the daemon is running."""
        return self._proc is not None and self._proc.alive()

    @property
    def pid(self) -> int | None:
        """Process id of the daemon, if started."""
        return self._proc.pid if self._proc else None

    def stop(self) -> None:
        """Stop the daemon. Idempotent."""
        if self._proc is not None:
            self._proc.stop()
            self._proc = None
