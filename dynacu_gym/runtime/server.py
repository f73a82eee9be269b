"""The task server: serves the current task's public files and its episode data on 127.0.0.1.

Routes:
    GET  /task/<path>    a file of the current task's folder (never ``task.toml`` or dotfiles)
    GET  /shared/<path>  a file of ``tasks/_shared/`` (the page runtime, styles, apps)
    GET  /variant-audio/<file>  a clip of the task's variant in play (rendered into the cache)
    GET  /api/episode    the episode as the page needs it: public config, the timeline of what
                         is shown, the audio clips to play, the seed, salted answer hashes
    POST /api/listen     audio the page recorded from its microphone (any format ffmpeg
                         reads); answers ``{"text": ...}`` as Whisper heard it, as a call
                         platform's speech recognition would

Nothing else is served, and only from the task in play: one task cannot fetch another's files.
"""

from __future__ import annotations

import json
import mimetypes
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from dynacu_gym.paths import VARIANT_URL, tasks_root
from dynacu_gym.runtime.process import InfraError
from dynacu_gym.tasks import TaskSpec
from dynacu_gym.tasks.answers import answer_hash, normalize

_PRIVATE_NAMES = {"task.toml"}
MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # one recorded utterance; minutes of Opus fit easily


@dataclass
class Episode:
    """What the server knows of the episode in play."""

    task: TaskSpec
    seed: int
    salt: str
    clips: list[dict[str, Any]] = field(default_factory=list)  # the page's audio clips
    variant_audio: Path | None = None  # where a variant's rendered clips lie


# What makes the transcriber of a listening page's uploads (see perception.asr's
# listening_transcriber): called once, when a page first needs it.
Listener = Callable[[], Callable[[bytes], str]]


# Long (~170 lines): the routes of one HTTP server (pages, clips, the listening endpoint)
# and the episode state they read, under one lock.
class TaskServer:
    """An HTTP server on 127.0.0.1 and a free port, serving one sandbox's pages."""

    def __init__(self, listener: Listener | None = None) -> None:
        self.listener = listener
        self._transcribe: Callable[[bytes], str] | None = None
        self._transcribe_lock = threading.Lock()
        self.heard: list[str] = []  # every utterance transcribed for the page, in order
        self._episode: Episode | None = None
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[tuple[str, int]] = []  # (path, status), for diagnostics and tests

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        if self._httpd is None:
            raise RuntimeError("the task server is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> None:
        """Bind a free port on 127.0.0.1 and serve in a background thread.

        Raises:
            InfraError: no port could be bound (all taken, or no loopback).
        """
        server = self

        class Handler(_Handler):
            owner = server

        try:
            self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        except OSError as e:
            raise InfraError(f"the task server could not bind a port on 127.0.0.1: {e}") from e
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="dynacu-task-server",
            daemon=True,
        )
        self._thread.start()

    def alive(self) -> bool:
        """Whether the server thread is serving."""
        return self._thread is not None and self._thread.is_alive()

    def begin_episode(
        self,
        task: TaskSpec,
        seed: int,
        clips: Sequence[dict[str, Any]] = (),
        variant_audio: Path | None = None,
    ) -> Episode:
        """Serve ``task`` from now on, with a fresh salt for its answers.

        ``clips`` are the page's audio clips (``audio_assets.audio_clips``), and
        ``variant_audio`` the folder of a variant's rendered ones, served under
        :data:`~dynacu_gym.paths.VARIANT_URL`.
        """
        episode = Episode(
            task=task,
            seed=seed,
            salt=secrets.token_hex(16),
            clips=[dict(c) for c in clips],
            variant_audio=variant_audio,
        )
        with self._lock:
            self._episode = episode
            self.heard = []
        if task.listens:
            self.transcriber()  # load now, not when the agent's first words arrive
        return episode

    def transcriber(self) -> Callable[[bytes], str]:
        """What transcribes what pages hear: made by the listener once, on first need.

        Raises:
            InfraError: the server was given no listener.
        """
        with self._transcribe_lock:
            if self._transcribe is None:
                if self.listener is None:
                    raise InfraError(
                        "the task server has no listener to transcribe what the page hears: "
                        "a sandbox for a listening page needs one (the env hands it in)"
                    )
                self._transcribe = self.listener()
            return self._transcribe

    def transcribe_upload(self, data: bytes) -> str:
        """Transcribe audio a page uploaded and remember what was heard."""
        text = self.transcriber()(data)
        with self._lock:
            self.heard.append(text)
        return text

    @property
    def episode(self) -> Episode | None:
        """The episode in play."""
        with self._lock:
            return self._episode

    def episode_payload(self) -> dict[str, Any]:
        """The JSON the page runtime reads at load: everything public about the episode."""
        episode = self.episode
        if episode is None:
            raise LookupError("no episode")
        task = episode.task
        timeline = []
        for line in task.script:
            if line.show or line.extra:
                timeline.append({"t": line.t, "show": line.show, "until": line.until, **line.extra})
        answers = {}
        for name, spec in task.answers.items():
            forms = {normalize(spec.kind, form) for form in spec.accept}
            near = {normalize(spec.kind, form) for form in spec.reject}
            answers[name] = {
                "kind": spec.kind,
                "hashes": sorted(answer_hash(episode.salt, name, f) for f in forms if f),
                # Near misses let a listening page tell a hedged answer from a right one.
                "near": sorted(answer_hash(episode.salt, name, f) for f in near if f),
            }
        return {
            "id": task.id,
            "title": task.title,
            "category": task.category,
            "config": task.config,
            "timeline": timeline,
            "audio": [dict(c) for c in episode.clips],
            "timeLimit": task.time_limit_s,
            "duration": task.duration_s,
            "success": task.success,
            "failures": list(task.failures),
            "checklist": list(task.checklist),
            "seed": episode.seed,
            "salt": episode.salt,
            "answers": answers,
        }

    def resolve(self, url_path: str) -> Path | None:
        """The file a URL path names, or None if it is not public for the task in play."""
        episode = self.episode
        path = unquote(urlsplit(url_path).path)
        if path.startswith("/task/") and episode is not None:
            base, rel = episode.task.root, path[len("/task/") :]
        elif path.startswith("/shared/"):
            base, rel = tasks_root() / "_shared", path[len("/shared/") :]
        elif path.startswith(VARIANT_URL) and episode is not None and episode.variant_audio:
            base, rel = episode.variant_audio, path[len(VARIANT_URL) :]
        else:
            return None
        parts = [p for p in rel.split("/") if p]
        if not parts or any(p.startswith(".") or p in _PRIVATE_NAMES for p in parts):
            return None
        base = base.resolve()
        target = base.joinpath(*parts).resolve()
        if not target.is_relative_to(base) or not target.is_file():
            return None
        return target

    def stop(self) -> None:
        """Stop serving and release the port. Idempotent."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


class _Handler(BaseHTTPRequestHandler):
    owner: TaskServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Quiet: the server's requests are kept in ``TaskServer.requests`` instead."""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.owner.requests.append((self.path, status))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if self.command == "HEAD":
            self.end_headers()
            return
        try:
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # The page went away first (a reset reloads it while a transcription was still
            # on its way back): nobody is left to answer, which is not an error.
            self.close_connection = True

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib naming
        """Same as GET without the body."""
        self.do_GET()

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        """Transcribe what the page heard."""
        if urlsplit(self.path).path != "/api/listen":
            self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain; charset=utf-8")
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 < length <= MAX_UPLOAD_BYTES:
            self._send(HTTPStatus.BAD_REQUEST, b'{"error": "bad length"}', "application/json")
            return
        data = self.rfile.read(length)
        try:
            text = self.owner.transcribe_upload(data)
        except ValueError as e:
            body = json.dumps({"error": str(e)}).encode()
            self._send(HTTPStatus.UNPROCESSABLE_ENTITY, body, "application/json")
            return
        except Exception as e:  # a missing model: the page shows the error, the test sees it
            body = json.dumps({"error": f"{type(e).__name__}: {e}"}).encode()
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, body, "application/json")
            return
        self._send(HTTPStatus.OK, json.dumps({"text": text}).encode(), "application/json")

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        """Serve a public file or the episode data."""
        if urlsplit(self.path).path == "/api/episode":
            try:
                payload = self.owner.episode_payload()
            except LookupError:
                self._send(HTTPStatus.NOT_FOUND, b'{"error": "no episode"}', "application/json")
                return
            self._send(HTTPStatus.OK, json.dumps(payload).encode(), "application/json")
            return
        target = self.owner.resolve(self.path)
        if target is None:
            self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain; charset=utf-8")
            return
        content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if content_type.startswith("text/") or content_type.endswith(("javascript", "json")):
            content_type += "; charset=utf-8"
        self._send(HTTPStatus.OK, target.read_bytes(), content_type)
