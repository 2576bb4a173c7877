"""dask's own log lines never reach the terminal of a sweep (issue 28: a flaky interrupt test).

At shutdown a worker's heartbeat can race the closing scheduler and log "Failed to communicate
with scheduler during heartbeat" with a ``Stream is closed`` traceback at ERROR level; on a loaded
machine that happened after Ctrl-C, and ``tests/sweep/test_interrupt_dask.py`` (which asks for
one line, no traceback) failed once. The local cluster now silences dask's logs below CRITICAL in
the scheduler and in every worker; a task's own error still reaches the sweep through its future.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("distributed", reason="distributed is not installed (pip install -e .[dask])")

SCRIPT = textwrap.dedent(
    """
    import logging
    from fastsched.sweep.client import client_for

    def noisy():
        logging.getLogger("distributed.worker").error("Failed to communicate with scheduler (worker)")
        return 1

    if __name__ == "__main__":
        with client_for(workers=1) as c:
            logging.getLogger("distributed.scheduler").error("Stream is closed (scheduler)")
            assert c.submit(noisy, pure=False).result() == 1
            assert list(c.run(noisy).values()) == [1]
        print("done")
    """
)


def test_dask_errors_stay_off_stderr(tmp_path):
    script = tmp_path / "noisy.py"
    script.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"
    assert "Failed to communicate" not in r.stderr and "Stream is closed" not in r.stderr, r.stderr
