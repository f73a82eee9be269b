"""``dynacu view RUN_DIR``: a static site of a run's episodes, to look at rather than read.

:func:`build_site` writes ``RUN/view/index.html`` (the episodes, which filter and sort, with the
report's charts) and a page per episode (its time axis: steps, keyframes, the page's spoken lines,
the transcript, the agent's speech and the verdict; the step's screenshot with the action drawn
on it, its keyframes and record; the speaker capture, synced with the axis). Plain HTML, CSS and
a small script each, copied from ``static/``; nothing is fetched at view time, and the pages open
from the file system or any static server. :func:`serve` serves the run on 127.0.0.1.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from pathlib import Path
from typing import Any, BinaryIO

from dynacu_gym.harness.viewer.build import VIEW_DIR, build_site, episode_data, gather

__all__ = ["VIEW_DIR", "ViewServer", "build_site", "episode_data", "gather", "serve"]


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files, quietly, with byte ranges: a browser seeks in the sound only with them."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass

    def send_head(self) -> Any:
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
        path = Path(self.translate_path(self.path))
        if match is None or not path.is_file() or match.groups() == ("", ""):
            return super().send_head()
        size = path.stat().st_size
        first, last = match.groups()
        start = int(first) if first else max(0, size - int(last))
        end = min(size - 1, int(last)) if first and last else size - 1
        if start >= size or start > end:
            self.send_error(416, "Requested Range Not Satisfiable")
            return None
        body = path.open("rb")
        body.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        return _Slice(body, end - start + 1)

    def end_headers(self) -> None:
        self.send_header("Accept-Ranges", "bytes")  # on every reply: ranges may be asked for
        super().end_headers()


class _Slice:
    """The part of a file a range asks for, read as ``copyfile`` reads a file."""

    def __init__(self, file: BinaryIO, length: int) -> None:
        self.file, self.left = file, length

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        data = self.file.read(size)
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.file.close()


class ViewServer(http.server.ThreadingHTTPServer):
    """The run folder served on 127.0.0.1 from a background thread; :meth:`stop` ends it."""

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.shutdown()
        self.server_close()


def serve(run: str | Path, port: int = 0) -> tuple[ViewServer, str]:
    """Serve the run folder on 127.0.0.1 (``port`` 0: any free one) from a background thread.

    Returns the server and the URL of the viewer's index.
    """
    run = Path(run).resolve()
    handler = functools.partial(_Handler, directory=str(run))
    server = ViewServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, name="dynacu-view", daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/{VIEW_DIR}/index.html"
