"""The env's own X display: an Xvfb server on a free display number, and a cheap screen grab."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import select
import shutil
import threading
import time
from pathlib import Path

import numpy as np

from dynacu_gym.runtime.process import ChildProcess, InfraError

SCREEN_WIDTH = 1280
SCREEN_HEIGHT = 720
IS_VIEWABLE = 2  # XWindowAttributes.map_state of a window that is mapped and shown


@functools.cache
def _xlib() -> ctypes.CDLL:
    """libX11 with the calls :meth:`VirtualDisplay.popups` makes, typed."""
    lib = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
    handle, window = ctypes.c_void_p, ctypes.c_ulong
    lib.XOpenDisplay.restype = handle
    lib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    lib.XDefaultRootWindow.restype = window
    lib.XDefaultRootWindow.argtypes = [handle]
    lib.XQueryTree.argtypes = [
        handle,
        window,
        ctypes.POINTER(window),
        ctypes.POINTER(window),
        ctypes.POINTER(ctypes.POINTER(window)),
        ctypes.POINTER(ctypes.c_uint),
    ]
    from mss.linux import XWindowAttributes

    lib.XGetWindowAttributes.argtypes = [handle, window, ctypes.POINTER(XWindowAttributes)]
    lib.XFree.argtypes = [ctypes.c_void_p]
    lib.XGrabServer.argtypes = [handle]
    lib.XUngrabServer.argtypes = [handle]
    lib.XCloseDisplay.argtypes = [handle]
    return lib


class VirtualDisplay:
    """An Xvfb server owned by one sandbox.

    Xvfb picks a free display number itself (``-displayfd``), so parallel envs never race for
    one. The screen is grabbed straight from the X server (``mss``, ~3 ms a frame) rather than
    through the browser (``page.screenshot``, 30-50 ms).
    """

    def __init__(self, workdir: Path, width: int = SCREEN_WIDTH, height: int = SCREEN_HEIGHT):
        self.workdir = workdir
        self.width = width
        self.height = height
        self.display: str | None = None
        self._proc: ChildProcess | None = None
        self._grabbers = threading.local()
        self._generation = 0  # bumped per start, so grabbers of a dead server are replaced

    def start(self, timeout: float = 10.0) -> None:
        """Start Xvfb and wait until it has chosen its display and accepts clients."""
        if shutil.which("Xvfb") is None:
            raise InfraError("Xvfb is not installed; run `make setup` (apt-get install xvfb)")
        read_fd, write_fd = os.pipe()
        try:
            self._proc = ChildProcess(
                "Xvfb",
                [
                    "Xvfb",
                    "-displayfd",
                    str(write_fd),
                    "-screen",
                    "0",
                    # One pixel wider and taller than the page: without a window manager
                    # Chromium will not make a window exactly the size of the screen (it
                    # comes out 1279x719); on this screen it is exactly 1280x720 at 0,0.
                    f"{self.width + 1}x{self.height + 1}x24",
                    "-nolisten",
                    "tcp",
                    "-noreset",
                    # No GLX: Chromium draws without the GPU here, and Xvfb's GLX loads Mesa's
                    # software renderer (libLLVM), 46 of its 69 MiB.
                    "-extension",
                    "GLX",
                ],
                log_path=self.workdir / "xvfb.log",
                pass_fds=(write_fd,),
            )
            os.close(write_fd)
            write_fd = -1
            number = b""
            deadline = time.monotonic() + timeout
            while not number.endswith(b"\n"):
                remaining = deadline - time.monotonic()
                ready, _, _ = select.select([read_fd], [], [], max(remaining, 0))
                chunk = os.read(read_fd, 16) if ready else b""
                if not chunk:
                    self.stop()
                    raise InfraError(
                        f"Xvfb did not report a display within {timeout:.0f} s: "
                        f"{self._proc.log_tail() if self._proc else ''}"
                    )
                number += chunk
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
        self.display = f":{int(number)}"
        self._generation += 1

    def alive(self) -> bool:
        """Whether the X server is running."""
        return self._proc is not None and self._proc.alive()

    @property
    def pid(self) -> int | None:
        """Process id of Xvfb, if started."""
        return self._proc.pid if self._proc else None

    def grab(self) -> np.ndarray:
        """The whole screen as a (height, width, 3) uint8 RGB array, a fresh copy.

        Each thread gets its own ``mss`` connection (they are not thread-safe).
        """
        if self.display is None:
            raise InfraError("the display is not started")
        grabber = getattr(self._grabbers, "mss", None)
        if grabber is None or self._grabbers.generation != self._generation:
            import mss

            if grabber is not None:
                grabber.close()
            grabber = mss.MSS(display=self.display)
            self._grabbers.mss = grabber
            self._grabbers.generation = self._generation
        try:
            shot = grabber.grab({"left": 0, "top": 0, "width": self.width, "height": self.height})
        except Exception as e:  # mss raises its own ScreenShotError and XErrors
            raise InfraError(f"could not grab the X display {self.display}: {e}") from e
        bgra = np.frombuffer(shot.raw, dtype=np.uint8).reshape(self.height, self.width, 4)
        return np.ascontiguousarray(bgra[:, :, 2::-1])

    def popups(self) -> list[tuple[int, int, int, int]]:
        """The boxes ``(x, y, width, height)`` of the browser's popup windows now shown.

        A native dropdown's list, a date or colour picker is a window of its own above the
        page (override-redirect, as no window manager places it), drawn after the page has
        painted. One query of the X server's window tree (0.36 ms measured), made with the
        server held (no other client's request runs meanwhile), so no window listed closes
        before its attributes are read: Xlib's answer to asking after a closed window is to end
        the process.
        """
        if self.display is None:
            raise InfraError("the display is not started")
        from mss.linux import XWindowAttributes

        lib = _xlib()
        connection = lib.XOpenDisplay(self.display.encode())
        if not connection:
            raise InfraError(f"could not open the X display {self.display}")
        lib.XGrabServer(connection)
        try:
            root, parent = ctypes.c_ulong(), ctypes.c_ulong()
            children, count = ctypes.POINTER(ctypes.c_ulong)(), ctypes.c_uint()
            root_window = lib.XDefaultRootWindow(connection)
            if not lib.XQueryTree(
                connection,
                root_window,
                ctypes.byref(root),
                ctypes.byref(parent),
                ctypes.byref(children),
                ctypes.byref(count),
            ):
                raise InfraError(f"could not list the windows of the X display {self.display}")
            boxes = []
            try:
                for i in range(count.value):
                    attributes = XWindowAttributes()
                    if not lib.XGetWindowAttributes(
                        connection, children[i], ctypes.byref(attributes)
                    ):
                        continue
                    if attributes.map_state == IS_VIEWABLE and attributes.override_redirect:
                        box = (attributes.x, attributes.y, attributes.width, attributes.height)
                        if box[2] > 1 and box[3] > 1:  # Chromium keeps 1x1 helper windows
                            boxes.append(box)
            finally:
                if children:
                    lib.XFree(children)
            return boxes
        finally:
            lib.XUngrabServer(connection)
            lib.XCloseDisplay(connection)  # sends the ungrab

    def release_grab(self) -> None:
        """Close the calling thread's grabbing connection, if it has one.

        A thread that grabbed calls this before it ends: its connection is not closed with it,
        and a capture thread per episode would leave one open socket per episode.
        """
        grabber = getattr(self._grabbers, "mss", None)
        if grabber is not None:
            self._grabbers.mss = None
            grabber.close()

    def stop(self) -> None:
        """Stop Xvfb. Idempotent."""
        self.release_grab()
        if self._proc is not None:
            self._proc.stop()
            self._proc = None
