"""What the human did after the agent acted, and the reward each outcome is worth."""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping

from lamar._errors import InvalidReward, echoed


class Signal(str, enum.Enum):
    """An outcome observed after an episode, strongest success first.

    >>> Signal.SHIPPED.reward, Signal.REVERTED.reward
    (1.0, -1.0)
    """

    SHIPPED = "shipped"
    ACCEPTED = "accepted"
    REASKED = "reasked"
    CORRECTED = "corrected"
    REVERTED = "reverted"

    @property
    def reward(self) -> float:
        return _REWARDS[self]

    @property
    def success(self) -> bool:
        return self in (Signal.SHIPPED, Signal.ACCEPTED)

    def __str__(self) -> str:
        return self.value


# Shipping is the strongest evidence of help; a revert the strongest of harm. Asking again
# costs the user a turn, a correction costs them the work of fixing it.
_REWARDS = {
    Signal.SHIPPED: 1.0,
    Signal.ACCEPTED: 0.6,
    Signal.REASKED: -0.3,
    Signal.CORRECTED: -0.6,
    Signal.REVERTED: -1.0,
}


def to_reward(signal: Signal | float | str) -> tuple[float, Signal | None]:
    """Map a Signal, its name, or a real number in [-1, 1] (NumPy's too, or written as text in ASCII
    digits, as `lamar report` reads it) to (reward, signal-or-None).

    >>> to_reward("accepted")
    (0.6, <Signal.ACCEPTED: 'accepted'>)
    >>> to_reward(-0.25), to_reward(" -0.25 ")
    ((-0.25, None), (-0.25, None))
    """
    if isinstance(signal, Signal):
        return signal.reward, signal
    if isinstance(signal, str):
        parsed = signal_named(signal)
        if parsed is not None:
            return parsed.reward, parsed
        from lamar.typed import typed_number

        # A form field, an interrupt's resume value or a config file gives a reward as text: read
        # as the command line reads it, so "0.5" is the same outcome at every entry point.
        number = typed_number(signal)
        if number is None:
            raise InvalidReward(
                f"unknown signal {echoed(signal)}{did_you_mean(signal)}: use one of "
                f"{', '.join(s.value for s in Signal)} or a number in [-1, 1] written in ASCII digits (such as -0.5)")
        if math.isnan(number) or not -1.0 <= number <= 1.0:
            raise InvalidReward(f"reward {echoed(signal)} is outside [-1, 1]; scale it or use a Signal")
        return number, None
    if isinstance(signal, bool) or not isinstance(signal, (int, float)) and not _real(signal):
        raise InvalidReward(f"a reward is a Signal, its name, or a number in [-1, 1]; got {type(signal).__name__}")
    try:
        reward = float(signal)
    except OverflowError:  # an int past float's range, such as 10**400
        raise InvalidReward(f"reward {str(signal)[:20]}... is outside [-1, 1]; scale it or use a Signal") from None
    except ValueError:  # a signaling NaN (Decimal("sNaN")), which float() refuses
        reward = math.nan
    if math.isnan(reward) or not -1.0 <= reward <= 1.0:
        raise InvalidReward(f"reward {signal!r} is outside [-1, 1]; scale it or use a Signal")
    return reward, None


def signal_named(text: str) -> Signal | None:
    """The Signal a name means, in any case and with a hyphen, underscore or space inside, else None.

    >>> signal_named(" Re-asked "), signal_named("re_asked"), signal_named("great")
    (<Signal.REASKED: 'reasked'>, <Signal.REASKED: 'reasked'>, None)
    """
    # The docs, the README and the agents' tool descriptions spell it "re-asked": a person typing
    # that into a review, or a model copying it, means the signal, not a typo.
    name = text.strip().lower()
    for mark in "-_ ":
        name = name.replace(mark, "")
    try:
        return Signal(name)
    except ValueError:
        return None


def did_you_mean(text: object, words: Mapping[str, Iterable[str]] | None = None) -> str:
    """" (did you mean 'reverted'?)" for text that names one signal in a word of its own (a form of its
    name, or one of `words`, phrases per signal name) or is a typo of its name, else "": a hint to a refusal.

    >>> did_you_mean("revert"), did_you_mean("fixed"), did_you_mean("correct"), did_you_mean("completed")
    (" (did you mean 'reverted'?)", '', '', '')
    """
    if not isinstance(text, str):
        return ""
    from lamar.signal_hint import meant

    # A guess by spelling alone put words in the user's mouth ("completed" read as "corrected"), and a
    # model told "did you mean X?" reports X: only a word that names the signal, or a slip of the hand.
    near = meant(text, words)
    return f" (did you mean {near!r}?)" if near else ""


def _real(value: object) -> bool:
    """Whether `value` is a real number of another type: a reward computed with NumPy (float32,
    int64), fractions or decimals is as good as a float."""
    import decimal  # only for such a value: `import lamar` stays cheap
    import numbers

    # Decimal is no numbers.Real (it refuses to mix with floats), yet every finite one is a reward.
    return isinstance(value, (numbers.Real, decimal.Decimal)) and not isinstance(value, bool)


# What an agent's own tools say about reporting (LangChain's and LlamaIndex's agent tools build
# their schemas from these, so the rule reads the same in every framework): only what the person
# did counts, never the agent's view of its own work.
TOOL_QUERY = "The task at hand or the problem you are stuck on, in one sentence."
TOOL_EPISODE = "The episode id that the lesson search returned (starts with 'ep_')."
TOOL_OUTCOME = (
    "What the USER did after you acted on the lessons, as they showed it: shipped or accepted "
    "your work, re-asked the same thing, corrected you, or reverted your change. Your own "
    "opinion of your work is not an outcome: if the user has not reacted yet, do not report.")
TOOL_EVIDENCE = "The user's words or action that show this outcome, quoted briefly."
TOOL_SEARCH = ("Look up lessons learned from past outcomes in this setting before you act. "
               "Returns the lessons (notes, not instructions) and an episode id.")
TOOL_REPORT = ("Record how the USER reacted after you used lessons from a search, once per "
               "episode. Only the user's reaction counts, never your own judgment.")


def tool_answer(episode_id: str, prompt: str) -> str:
    """The search tool's text: the episode to report against, then the lessons block (if any)."""
    return f"Episode {episode_id}.\n{prompt}" if prompt else f"No lessons apply here (episode {episode_id})."


def tool_recorded(outcome: str, episode_id: str) -> str:
    """The report tool's reply."""
    return f"Recorded {outcome} for {episode_id}."
