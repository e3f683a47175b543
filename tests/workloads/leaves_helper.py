"""A component that starts a helper process of its own on its first call and returns, leaving
the helper running in the trial's process group.

With ADVISOR_TEST_PIDFILE set, the first call writes "<own pid> <helper pid>" there, so a test
can check that the helper died with the trial that ended normally.
"""

import os
import subprocess
import sys

import torch

from advisor import Workload

_started: list[int] = []


def forward(x: torch.Tensor) -> torch.Tensor:
    if not _started:
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        _started.append(helper.pid)
        pidfile = os.environ.get("ADVISOR_TEST_PIDFILE")
        if pidfile:
            with open(pidfile + ".tmp", "w") as f:
                f.write(f"{os.getpid()} {helper.pid}")
            os.replace(pidfile + ".tmp", pidfile)
    return x + 1


workload = Workload(
    name="leaves-helper",
    build=lambda device, dtype: forward,
    inputs=lambda shape, device: (torch.ones(shape["batch"], device=device),),
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32",),
)
