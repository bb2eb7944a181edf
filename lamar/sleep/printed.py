"""How review, apply and the UI print the fields of a sleep report a person may have edited by hand:
one line each, bounded, quoted and cut as refusals quote what they were given (`echoed`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lamar._errors import echoed

if TYPE_CHECKING:
    from lamar.sleep.proposals import SleepReport


def printed_id(value: str) -> str:
    """An id (of a proposal, a lesson, a scope key) as it is when it reads as one word, else as
    `echoed` quotes it: a hand edit can put a newline, a quote, a space or 10 000 characters in one.

    >>> printed_id("merge_2eb086b34f72"), printed_id("merge_1\\n  applied  merge_2")
    ('merge_2eb086b34f72', "'merge_1\\\\n  applied  merge_2'")
    >>> printed_id("exp_" + "x" * 9_996)
    "'exp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…xxxxxxxxxxxxxxxxxxx' (10000 characters)"
    """
    quoted = echoed(value)
    # `echoed` quotes the value bare only when it has nothing to escape, cut or redact: then the quotes
    # add nothing to a word, and a line a script or a person matches on an id keeps the id as sleep wrote it.
    return value if quoted == f"'{value}'" and value and " " not in value else quoted


def printed_reason(text: str) -> str:
    """A proposal's reason on one line: whole up to the length apply takes a reason at, else its
    ends and its length, so a pasted log cannot fill the screen or start a line of its own.

    >>> printed_reason("proven harmful:\\n  lift -0.3")
    'proven harmful: lift -0.3'
    >>> printed_reason("x" * 7_000)[-20:]
    "x' (7000 characters)"
    """
    from lamar.safety.boundary import MAX_LESSON_CHARS

    flat = " ".join(text.split())  # every line break and run of spaces, Unicode's too, is one space
    return flat if len(flat) <= MAX_LESSON_CHARS else echoed(flat)


def report_lacks(report: SleepReport) -> str:
    """What a reviewer of `report` should know it lacks, not only what it holds: the mining that
    failed, or the part of the model's output mining could not read; "" when it lacks neither."""
    if report.mining_error:
        return (f"mining failed when this report was made, so it holds no mined lesson "
                f"({printed_reason(report.mining_error)}); run lamar sleep with --traces again to mine them")
    if report.mining_lost:
        return (f"mining read only part of the model's output when this report was made "
                f"({printed_reason(report.mining_lost)})")
    return ""


__all__ = ["printed_id", "printed_reason", "report_lacks"]
