"""Table 6's last column: how many times as often the split lesson goes in where it helps."""

from lamar.gym.monitor_report import _ratio


def _rows(swift: float, python: float) -> list[dict[str, object]]:
    return [{"split_rate_swift_2000": swift, "split_rate_python_2000": python}]


def test_a_policy_that_never_injects_it_has_no_ratio() -> None:
    # `none` injects nothing in either language: 0 / 0 read "inf", the same as the oracle's perfect split.
    assert _ratio(_rows(0.0, 0.0)) == "-"


def test_a_lesson_only_injected_where_it_helps_is_infinitely_selective() -> None:
    assert _ratio(_rows(1.0, 0.0)) == "inf"
    assert _ratio(_rows(0.655, 0.035)) == "18.7x"
