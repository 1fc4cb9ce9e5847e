"""What the promotion gate prints: both models' figures on the gate's rows, the counts behind the ratio and the
rule it applied (:func:`fairops.registry.promote`'s verdict)."""

from __future__ import annotations

from ..metrics import FairnessRule
from ..metrics._fairness_rule import percent

LABEL = "fairops_label"  # the column the gate's rows carry their labels in


def bases_text(task, frame, groups: dict) -> str:
    """The rows behind the task's rate per group of each attribute (positives for TPR, negatives for FPR,
    all rows for the positive rate), e.g. ``sex: F 120, M 310 negatives``."""
    from fairops.metrics._windows import BASE_UNIT, rate_bases

    bases = rate_bases(task, frame[LABEL].to_numpy(), groups).attributes
    return "; ".join(f"{attribute}: " + ", ".join(f"{group} {count}" for group, count in counts.items())
                     + f" {BASE_UNIT[task.fairness]}" for attribute, counts in bases.items())


def figure_lines(task, frame, groups: dict, scores: dict, *, min_fairness, max_accuracy_drop, rule: FairnessRule):
    """Both models' figures on the gate's rows, the counts behind the ratio and the rule, as printed lines."""
    accuracy, ratio = f"fairops_{task.metric}", f"fairops_{task.fairness}_ratio"
    level = percent(rule.level)
    lines = [f"  on {len(frame)} gate rows, each decided as the version serves it ({bases_text(task, frame, groups)})",
             f"  {'':<10} {task.metric + f' [{level} interval]':>28}   {task.fairness_label} [{level} interval]"]
    for role, values in scores.items():
        shown = f"{values[accuracy]:.4f} [{values[f'{accuracy}_lower']:.4f}, {values[f'{accuracy}_upper']:.4f}]"
        lines.append(f"  {role:<10} {shown:>28}   {values[ratio]:.4f} "
                     f"[{values[f'{ratio}_lower']:.4f}, {values[f'{ratio}_upper']:.4f}]")
    line = f"{rule.line:g}"
    rule_words = [f"fairness ratio and its interval's lower bound >= {min_fairness}" if min_fairness is not None
                  else "no fairness floor (give --min-fairness)",
                  f"fairness not below the line {line} beyond noise (its {level} interval's upper bound >= {line})"
                  if rule.active else "no fairness line"]
    if "champion" in scores:
        rule_words += ["fairness not below the champion's beyond noise (the intervals overlap or the candidate's is "
                       "higher)", f"{task.metric} at most {max_accuracy_drop} below the champion's"
                       if max_accuracy_drop is not None else f"no {task.metric} check"]
    return lines + ["  rule: " + "; ".join(rule_words)]
