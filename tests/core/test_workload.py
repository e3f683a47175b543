"""Loading workload files: the good one, and every way a file can break the contract."""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import pytest

from advisor import Quality, Workload, WorkloadError, load_workload
from advisor.workload import DEFAULT_TOLERANCES

TINY_MLP = Path(__file__).parents[1] / "workloads" / "tiny_mlp.py"

# A valid workload that needs no torch to load: every case below changes one part of it.
HEADER = """\
from advisor import Quality, Workload


def build(device, dtype):
    return lambda x: x


def inputs(shape, device):
    return ([0.0] * shape["batch"],)


def agreement(reference, candidate):
    return 1.0

"""
GOOD_ARGS = 'name="toy", build=build, inputs=inputs, traffic=[({"batch": 4}, 1)]'


def write(tmp_path: Path, body: str, name: str = "wl.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def workload_file(tmp_path: Path, args: str = GOOD_ARGS) -> Path:
    return write(tmp_path, HEADER + f"workload = Workload({args})\n")


def load_error(path: Path) -> str:
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message  # names the file
    assert len(message.splitlines()) == 1, message  # one line
    return message


# --- good workloads ---------------------------------------------------------------------------


def test_load_the_tiny_mlp() -> None:
    loaded = load_workload(TINY_MLP)
    wl = loaded.workload
    assert isinstance(wl, Workload)
    assert wl.name == "tiny-mlp"
    assert loaded.path == TINY_MLP.resolve()
    assert loaded.source_sha256 == hashlib.sha256(TINY_MLP.read_bytes()).hexdigest()
    assert wl.dtypes == ("fp32", "bf16")
    assert isinstance(wl.quality, Quality)
    assert wl.info is not None and wl.info() == {"weights": "seeded random"}
    # traffic [({"batch": 16}, 3), ({"batch": 32}, 1)] -> weights 3/4 and 1/4
    assert wl.traffic == (({"batch": 16}, 0.75), ({"batch": 32}, 0.25))
    assert wl.shape == {"batch": 16}


def test_load_a_minimal_workload_from_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workload_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    loaded = load_workload("wl.py")
    assert loaded.workload.name == "toy"
    assert loaded.path == tmp_path / "wl.py"
    assert loaded.workload.dtypes == ("fp32", "tf32", "bf16", "fp16")
    assert loaded.workload.quality is None
    assert loaded.workload.inference is True


def test_traffic_weights_are_normalised_and_default_shape_is_the_heaviest() -> None:
    wl = Workload(
        name="w",
        build=print,
        inputs=print,
        traffic=[({"batch": 1}, 1), ({"batch": 8}, 6), ({"batch": 64}, 3)],
    )
    # total 1 + 6 + 3 = 10 -> 0.1, 0.6, 0.3
    weights = [w for _, w in wl.traffic]
    assert weights == pytest.approx([0.1, 0.6, 0.3])
    assert sum(weights) == pytest.approx(1.0)
    assert wl.shape == {"batch": 8}


def test_explicit_default_shape_wins_and_is_a_copy() -> None:
    wl = Workload(
        name="w",
        build=print,
        inputs=print,
        traffic=[({"batch": 8}, 1)],
        default_shape={"batch": 2},
    )
    assert wl.shape == {"batch": 2}
    wl.shape["batch"] = 99
    assert wl.shape == {"batch": 2}


def test_tolerances_default_per_dtype() -> None:
    wl = Workload(
        name="w",
        build=print,
        inputs=print,
        traffic=[({"batch": 8}, 1)],
        tolerances={"bf16": (0.1, 0.2)},
    )
    assert wl.tolerance("bf16") == (0.1, 0.2)
    assert wl.tolerance("fp32") == DEFAULT_TOLERANCES["fp32"]


def test_quality_direction() -> None:
    higher = Quality("overlap", lambda r, c: 1.0, threshold=0.9)
    assert higher.passes(0.9) and higher.passes(1.0) and not higher.passes(0.89)
    lower = Quality("error", lambda r, c: 0.0, threshold=0.1, higher_is_better=False)
    assert lower.passes(0.1) and lower.passes(0.0) and not lower.passes(0.11)


def test_loading_twice_gives_a_fresh_module(tmp_path: Path) -> None:
    path = workload_file(tmp_path)
    assert load_workload(path).workload.name == "toy"
    workload_file(tmp_path, GOOD_ARGS.replace('"toy"', '"toy2"'))
    assert load_workload(path).workload.name == "toy2"


# --- bad files --------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    assert "no such workload file" in load_error(tmp_path / "nope.py")


def test_directory_is_not_a_workload(tmp_path: Path) -> None:
    assert "no such workload file" in load_error(tmp_path)


def test_not_a_python_file(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + f"workload = Workload({GOOD_ARGS})\n", name="wl.txt")
    assert ".py" in load_error(path)


def test_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path, "import os\nworkload = (\n")
    message = load_error(path)
    assert "SyntaxError" in message
    assert "line 2" in message


def test_import_raising(tmp_path: Path) -> None:
    path = write(tmp_path, "x = 1\nraise RuntimeError('no weights here')\n")
    message = load_error(path)
    assert "import failed" in message
    assert "RuntimeError: no weights here" in message
    assert "(line 2)" in message


def test_import_raising_inside_a_library_names_the_workload_line(tmp_path: Path) -> None:
    path = write(tmp_path, "import json\n\njson.loads('{')\n")
    message = load_error(path)
    assert "JSONDecodeError" in message
    assert message.endswith("(line 3)")  # the workload's line, not json's


def test_missing_import(tmp_path: Path) -> None:
    message = load_error(write(tmp_path, "import advisor_no_such_module_xyz\n"))
    assert "ModuleNotFoundError" in message


def test_sys_exit_at_import(tmp_path: Path) -> None:
    message = load_error(write(tmp_path, "import sys\nsys.exit(3)\n"))
    assert "SystemExit" in message


def test_no_workload(tmp_path: Path) -> None:
    message = load_error(write(tmp_path, HEADER + "wl = Workload(" + GOOD_ARGS + ")\n"))
    assert "defines no `workload`" in message


def test_workload_of_the_wrong_type(tmp_path: Path) -> None:
    message = load_error(write(tmp_path, "workload = {'name': 'toy'}\n"))
    assert "`workload` is a dict, not an advisor.Workload" in message


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ('name="", build=build, inputs=inputs, traffic=[({"batch": 4}, 1)]', "name"),
        ('name=None, build=build, inputs=inputs, traffic=[({"batch": 4}, 1)]', "name"),
        ('name="t", build="build", inputs=inputs, traffic=[({"batch": 4}, 1)]', "build"),
        ('name="t", build=build, inputs=3, traffic=[({"batch": 4}, 1)]', "inputs"),
        ('name="t", build=build, inputs=inputs, traffic=[]', "traffic"),
        ('name="t", build=build, inputs=inputs, traffic=None', "traffic"),
        ('name="t", build=build, inputs=inputs, traffic=[({"batch": 4},)]', "traffic entry"),
        ('name="t", build=build, inputs=inputs, traffic=[({"batch": 0}, 1)]', "traffic entry"),
        ('name="t", build=build, inputs=inputs, traffic=[({"batch": 4.0}, 1)]', "traffic entry"),
        ('name="t", build=build, inputs=inputs, traffic=[({}, 1)]', "traffic entry"),
        ('name="t", build=build, inputs=inputs, traffic=[({"batch": 4}, 0)]', "traffic entry"),
        ('name="t", build=build, inputs=inputs, traffic=[({"batch": 4}, "1")]', "traffic entry"),
        ('name="t", build=build, inputs=inputs, traffic=[(4, 1)]', "traffic entry"),
        (GOOD_ARGS + ', dtypes=("fp32", "fp64")', "dtypes"),
        (GOOD_ARGS + ", dtypes=()", "dtypes"),
        (GOOD_ARGS + ', dtypes="fp32"', "dtypes"),
        (GOOD_ARGS + ', tolerances={"fp64": (1e-3, 1e-3)}', "tolerances"),
        (GOOD_ARGS + ', tolerances={"bf16": (1e-3,)}', "tolerances"),
        (GOOD_ARGS + ', tolerances={"bf16": (-1.0, 1e-3)}', "tolerances"),
        (GOOD_ARGS + ', tolerances={"bf16": ("a", "b")}', "tolerances"),
        (GOOD_ARGS + ', tolerances={"bf16": 0.1}', "tolerances"),
        (GOOD_ARGS + ", tolerances=[0.1, 0.1]", "tolerances"),
        (GOOD_ARGS + ", quality=agreement", "quality"),
        (GOOD_ARGS + ', quality=Quality("q", "not callable", 0.9)', "quality"),
        (GOOD_ARGS + ', default_shape={"batch": -1}', "default_shape"),
        (GOOD_ARGS + ", default_shape=4", "default_shape"),
        (GOOD_ARGS + ', info="weights"', "info"),
    ],
)
def test_workload_with_a_bad_part(tmp_path: Path, args: str, words: str) -> None:
    message = load_error(workload_file(tmp_path, args))
    assert words in message
    assert "import failed" not in message  # the contract's own words, not a traceback


def test_bad_workload_built_in_code_raises_workload_error() -> None:
    with pytest.raises(WorkloadError, match="traffic"):
        Workload(name="w", build=print, inputs=print, traffic=[])
