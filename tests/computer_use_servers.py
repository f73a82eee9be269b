"""A local JSON server for the computer-use agents' wire tests; each test file scripts its answers.

The agents' real SDKs send their requests to it, so a test sees the requests as they go on
the wire and answers them as the vendor's API would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    """A request the server got: its path, its headers (names in lower case), its JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Answer:
    """What the server sends back: a status, a JSON body and any headers beside the usual."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@contextmanager
def local_server(respond: Callable[[Request], Answer]) -> Iterator[int]:
    """Serve every POST with ``respond`` on a free port of 127.0.0.1, which is yielded.

    ``respond`` runs on the server's thread; what it blocks for, the client waits for.
    """

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            headers = {k.lower(): v for k, v in self.headers.items()}
            answer = respond(Request(self.path, headers, json.loads(raw)))
            data = json.dumps(answer.body).encode()
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
