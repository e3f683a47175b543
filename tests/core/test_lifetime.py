"""How a child process ends (`advisor.lifetime.end_process`): as Python's exit would, less the
teardown, run for real in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ENDS = textwrap.dedent("""
    import atexit, logging, sys, tempfile, threading, time
    from pathlib import Path

    from advisor.lifetime import end_process

    out = Path(sys.argv[1])
    logging.basicConfig(filename=out / "log.txt", level=logging.INFO)
    logging.info("logged")  # flushed by logging's own atexit handler
    kept = tempfile.TemporaryDirectory(dir=out)  # removed by its weakref finalizer at exit
    (out / "tempdir.txt").write_text(kept.name)

    def late() -> None:  # a non-daemon thread still running: joined before the handlers
        time.sleep(0.3)
        (out / "thread.txt").write_text("joined")

    threading.Thread(target=late).start()
    atexit.register(lambda: print("atexit ran after", (out / "thread.txt").read_text()))
    sys.stdout.write("buffered, no newline ")
    sys.stderr.write("to stderr")
    end_process(3)
    print("never reached")
""")


def test_a_process_ends_with_its_code_its_handlers_run_and_its_output_flushed(
        tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered
    done = subprocess.run([sys.executable, "-c", ENDS, str(tmp_path)], capture_output=True,
                          text=True, timeout=120, check=False, env=env)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "buffered, no newline atexit ran after joined\n"
    assert done.stderr == "to stderr"
    assert "INFO:root:logged" in (tmp_path / "log.txt").read_text()
    assert not Path((tmp_path / "tempdir.txt").read_text()).exists()
