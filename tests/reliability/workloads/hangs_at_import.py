"""A workload file that hangs at import (as one waiting on a download or a lock would); it
touches $ADVISOR_TEST_IMPORT_MARK first, so a test knows the import has begun."""

import os
import time

mark = os.environ.get("ADVISOR_TEST_IMPORT_MARK")
if mark:
    open(mark, "w").close()
time.sleep(3600)
