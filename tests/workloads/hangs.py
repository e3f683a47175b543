"""A component that never returns, after starting a helper process of its own.

With ADVISOR_TEST_PIDFILE set, the first call writes "<own pid> <helper pid>" there, so a test
can check that a timeout killed the trial's whole process group, helper included.
"""

import os
import subprocess
import sys
import threading

import torch

from advisor import Workload


def forward(x: torch.Tensor) -> torch.Tensor:
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    pidfile = os.environ.get("ADVISOR_TEST_PIDFILE")
    if pidfile:
        with open(pidfile + ".tmp", "w") as f:
            f.write(f"{os.getpid()} {helper.pid}")
        os.replace(pidfile + ".tmp", pidfile)
    threading.Event().wait()  # forever
    return x


workload = Workload(
    name="hangs",
    build=lambda device, dtype: forward,
    inputs=lambda shape, device: (torch.ones(shape["batch"], device=device),),
    traffic=[({"batch": 4}, 1)],
    dtypes=("fp32",),
)
