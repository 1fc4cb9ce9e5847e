"""The command's error boundary: what the user gave wrong is one line and exit status 2; a fault inside fairops
or a library keeps its traceback instead of passing for a usage error."""

import subprocess
import sys

import pytest

from fairops.cli import exit_status
from fairops.errors import InputError


def _fails_with(error):
    def run(args):
        raise error
    return run


def test_an_input_error_is_one_line_and_status_2(capsys):
    from types import SimpleNamespace

    assert exit_status(_fails_with(InputError("column 'x' is missing")), SimpleNamespace(command="tune")) == 2
    assert capsys.readouterr().err == "fairops tune: error: column 'x' is missing\n"


@pytest.mark.parametrize("fault", [ValueError("operands could not be broadcast"), KeyError("budget"),
                                   TypeError("unsupported operand")])
def test_any_other_error_propagates_with_its_traceback(fault):
    from types import SimpleNamespace

    with pytest.raises(type(fault)):
        exit_status(_fails_with(fault), SimpleNamespace(command="tune"))


def _run(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "fairops.cli", *argv], capture_output=True, text=True, cwd=cwd)


@pytest.mark.slow  # over 5 s in the quick tier
def test_a_malformed_or_damaged_data_file_is_a_one_line_input_error(tmp_path):
    (tmp_path / "bad.csv").write_text('x,g,y\n1,a,0\n2,"b,1\n')  # an unclosed quote
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really parquet")
    for name in ("bad.csv", "bad.parquet"):
        result = _run("tune", "--data", name, "--target", "y", "--sensitive", "g", cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"fairops tune: error: data file '{name}' cannot be read as {name.split('.')[1]}: ")
        assert "Traceback" not in result.stderr
