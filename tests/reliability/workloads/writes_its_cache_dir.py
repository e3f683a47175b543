"""A workload file that writes its process's Inductor cache dir (the trial's working directory,
which the launcher made) to $ADVISOR_TEST_IMPORT_MARK and then fails its import."""

import os

with open(os.environ["ADVISOR_TEST_IMPORT_MARK"], "w") as f:
    f.write(os.environ["TORCHINDUCTOR_CACHE_DIR"])
raise RuntimeError("this workload only reports where its trial ran")
