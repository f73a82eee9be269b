"""Frames freed go back to the system (glibc's mmap threshold fixed, runtime/memory.py)."""

import subprocess
import sys

import pytest

# In a fresh process: free one 30 MiB buffer (which, left to glibc, raises its mmap threshold
# to 30 MiB), then make frame-sized buffers with small long-lived ones between them, as a
# process does that keeps records while it grabs frames, and free the frames. Prints how much
# of the frames' memory the process still holds.
PROBE = """
import sys
from pathlib import Path
from dynacu_gym.runtime.memory import give_back_large_buffers
if sys.argv[1] == "fixed":
    assert give_back_large_buffers()
def rss_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
big = bytearray(30 << 20)
del big
base = rss_mib()
frames, kept = [], []
for _ in range(40):
    frames.append(bytearray(2_764_800))  # a 1280x720 RGB frame, pages touched
    kept.append(bytearray(2048))  # from malloc, not Python's small-object pools
del frames
print(rss_mib() - base)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc on Linux")
def test_frames_freed_are_given_back_to_the_system():
    def held(setting: str) -> float:
        out = subprocess.run(
            [sys.executable, "-c", PROBE, setting], capture_output=True, text=True, check=True
        )
        return float(out.stdout)

    # Of 105 MiB of frames freed, glibc alone kept 45 MiB here (the rest sat at the heap's top,
    # which it trims); with the threshold fixed, none.
    assert held("default") > 30  # the case this guards against is real on this machine
    assert held("fixed") < 10
