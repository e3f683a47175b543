"""A sweep's outcome and its host's room, tried as a failing workload and a greedy user would:
a sweep none of whose own trials passed exits 1 even when earlier sweeps left a pick, and trials
at once are bounded by the host's cores and available memory (`--jobs 100000` once forked several
hundred workers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_support import sweep_support

FOUR_DTYPES = sweep_support.FOUR_DTYPES
advisor = sweep_support.advisor
sqlite_url = sweep_support.sqlite_url


@pytest.mark.slow
def test_a_sweep_whose_every_trial_failed_exits_1_even_with_an_earlier_pick(
    tmp_path: Path,
) -> None:
    # The same workload (by name) swept twice on one database: the first sweep's trial passes,
    # the second's fails (its file's build raises). The answer printed for the second rests on
    # the first sweep; the second sweep itself failed, says so and exits 1.
    url = sqlite_url(tmp_path / "a.db")
    args = ("--db", url, "--modes", "eager", "--dtypes", "fp32", "--no-warm",
            "--no-confirm-leaders")
    first = advisor("sweep", FOUR_DTYPES, *args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    broken = tmp_path / "four_dtypes.py"
    broken.write_text(FOUR_DTYPES.read_text().replace(
        "def build(device: str, dtype: torch.dtype) -> torch.nn.Module:\n",
        "def build(device: str, dtype: torch.dtype) -> torch.nn.Module:\n"
        "    raise RuntimeError('this build always fails')\n"))
    second = advisor("sweep", broken, *args, cwd=tmp_path)
    assert second.returncode == 1, second.stderr
    (line,) = [x for x in second.stderr.splitlines() if "ran and passed in sweep 2" in x]
    assert line == ("advisor: no config of four-dtypes ran and passed in sweep 2 (1 failed) "
                    "(the answer above rests on earlier sweeps of it); see `advisor show 2`")


def test_trials_at_once_are_bounded_by_the_hosts_cores_and_its_available_memory() -> None:
    from advisor.api import MEMORY_PER_TRIAL, check_host_room
    from advisor.errors import ConfigError

    check_host_room(4, 1, cores=2, available_bytes=4 * MEMORY_PER_TRIAL)  # 2 a core, 4 fit
    check_host_room(1, 1, cores=1, available_bytes=0)  # one trial is always allowed
    with pytest.raises(ConfigError, match=r"--jobs 5 asks for 5 trials at once, more than this "
                                          r"host's 2 cores can run \(2 a core\); give --jobs at "
                                          r"most 4"):
        check_host_room(5, 1, cores=2, available_bytes=64 * MEMORY_PER_TRIAL)
    # 3.5 GiB available: 3 trials fit, not 4
    with pytest.raises(ConfigError, match=r"--jobs 2 on --workers 2 asks for 4 trials at once, "
                                          r"more than this host's 3.5 GiB of available memory "
                                          r"holds \(1 GiB a trial\); give --jobs at most 1"):
        check_host_room(2, 2, cores=8, available_bytes=int(3.5 * MEMORY_PER_TRIAL))
