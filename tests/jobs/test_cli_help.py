"""``fairops <command> --help`` explains every option, with its default, in plain text."""

import argparse
import contextlib
import io
import re

import pytest

from fairops.cli import build_parser, main
from fairops.models._families import BUILT_IN


def _commands():
    parser = build_parser()
    (subcommands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return subcommands.choices


def _help(*argv) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    return out.getvalue()


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_option_has_help_and_shows_its_default(command):
    parser = _commands()[command]
    text = _help(command)
    assert "``" not in text and ":func:" not in text and ":class:" not in text
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS or action.dest == "help":
            continue
        assert action.help, f"fairops {command} {action.option_strings[0]} has no help"
        shown = action.default not in (None, False)
        if shown:  # the default is in the help, as the formatter appends it or the text names it
            entry = " ".join(text.split(f"  {action.option_strings[0]}", 1)[1].split("\n  -")[0].split())
            assert re.search(r"\bdefault\b", entry), \
                f"fairops {command} {action.option_strings[0]}: no default in {entry!r}"


def test_tune_help_gives_the_task_grammar_and_the_family_names():
    text = " ".join(_help("tune").split())
    assert "METRIC@TARGET=VALUE,ratio=RATE" in text
    assert "'precision@tpr=0.5,ratio=tpr'" in text and "'recall@fpr=0.05,ratio=fpr'" in text
    for family in BUILT_IN:
        assert family.name in text
    assert "(default: fb-auto)" in text and "(default: 1)" in text  # --method, --iterations


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_command_has_a_description(command):
    assert _commands()[command].description, f"fairops {command} --help has no description"


def _option_help(text: str, option: str) -> str:
    return " ".join(text.split(f"  {option} ", 1)[1].split("\n  -")[0].split())


def test_the_sensitive_help_says_what_tuning_computes_over_two_attributes():
    import numpy as np

    from fairops.metrics import Task

    text = _option_help(_help("tune"), "--sensitive")
    assert "lowest" in text and "the first" not in text and "groups=intersectional" in text
    # the rule the help states, on rows where the first attribute is the fair one: 16 positives per group of
    # each, and group b of 'second' has half the true positives of its group a (the negatives all score low)
    y = np.repeat([1, 0], 32)
    first = np.array(["x", "y"] * 32)
    second = np.tile(np.repeat(["a", "b"], 16), 2)
    scores = np.where((y == 0) | ((second == "b") & (np.arange(64) % 4 >= 2)), 0.1, 0.9)
    task = Task("recall", "threshold", 0.5, "tpr", ("first", "second"))
    metrics, _ = task.measure(y, scores, {"first": first, "second": second})
    assert (metrics["fairness.first"], metrics["fairness.second"]) == pytest.approx((1.0, 0.5))
    assert metrics["fairness"] == pytest.approx(0.5)
    assert metrics["fairness"] != pytest.approx(metrics["fairness.first"])  # not "taken over the first"


def test_promote_help_gives_its_exit_codes():
    epilog = " ".join(_help("promote").split())
    assert all(code in epilog for code in ("0 passed", "3 refused", "2 a usage or data error"))


@pytest.mark.parametrize("command", sorted(_commands()))
def test_a_mistyped_option_prints_the_subcommands_usage(command, capsys):
    actions = _commands()[command]._actions
    known = [o for a in actions for o in a.option_strings if o.startswith("--") and o != "--help"]
    positionals = ["MODEL"] * sum(1 for a in actions if not a.option_strings)  # serve, promote, monitor's MODEL
    positionals += [token for a in actions if a.required and a.option_strings for token in (a.option_strings[0], "1")]
    typo = known[0][:-1] + known[0][-1] * 2  # one letter doubled
    with pytest.raises(SystemExit) as refused:
        main([command, f"{typo}=1", *positionals])
    err = capsys.readouterr().err
    assert refused.value.code == 2
    assert err.startswith(f"usage: fairops {command} "), err
    assert f"fairops {command}: error: unrecognized arguments: {typo}=1 (did you mean {known[0]}?)" in err
