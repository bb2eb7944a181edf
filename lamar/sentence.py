"""How a lesson reads as one sentence, "When X, do Y, because Z.", whatever case its parts were typed in."""

from __future__ import annotations

import re


def sentence(precondition: str, action: str, rationale: str = "") -> str:
    """The one-line sentence `Experience.render` shows.

    >>> sentence("The build fails", "Roll back first, then investigate.", "Because it is cheap")
    'When the build fails, roll back first, then investigate, because it is cheap.'
    """
    said = bool(rationale.strip())
    text = f"When {_mid_sentence(_opened(_strip(precondition, _GOES_ON), 'when'), _LEADS)}, " \
           f"{_clauses(_strip(action, _GOES_ON if said else _ENDS))}"
    if said:
        because = _opened(_strip(rationale, _ENDS), "because")
        text += f", because {_clauses(because, _LEADS, instruction=False)}"  # a fact: its first word is no verb
    return text if text.endswith(("!", "?")) else text + "."  # "once!." reads as a typo


def _strip(text: str, marks: str) -> str:
    return " ".join(text.split()).rstrip(marks)


# A part the sentence goes on after loses any end mark ("rebuild!, because" reads as a typo); the
# last keeps a "!" or "?", which then ends the sentence.
_GOES_ON = ".!?,;:"
_ENDS = ".,;:"
# Words that open a part written as its own sentence ("The build fails") and read in lower case
# after "When" or "because". Only these: "Xcode", "CI", "Python" are names and keep their capital.
_LEADS = frozenset(re.findall(r"\S+", """
    the a an this that these those my our your its their some any every each no all another it
    there they we you
"""))


def _opened(text: str, word: str) -> str:
    """`text` without its own opening `word`, which render says already: a precondition typed as
    "When the build fails" (the form's field, an agent's note) must not read "When When the build fails".

    >>> _opened("When the build fails", "when"), _opened("because", "because")
    ('the build fails', 'because')
    """
    first, _, rest = text.partition(" ")
    return rest if rest and first.lower() == word else text


# Words a rule written as its own sentence opens with: an imperative, its adverb or a leading
# preposition ("For large files, use ..."). Only these are lower-cased after "When X, ": a name
# ("Python", "Xcode", "Docker") keeps its capital, and a capital left in mid-sentence costs less
# than a name spelt wrong.
_OPENERS = frozenset(re.findall(r"\S+", """
    after also before by during for if in instead on once please then to unless when whenever with
    without add always ask avoid be bump call check clear close commit confirm consider copy create
    delete describe disable do don't document drop enable ensure explain fetch first fix follow
    force format give install keep leave let limit lint list log look make mark mention merge move never
    note only open pin prefer print pull push put read rebase rebuild reinstall remember remove
    rename reply report rerun reset restart retry return revert run save say search see send set
    show skip split start stop switch tell test try turn update upgrade use verify wait write
    annotate apply break catch extend group handle import include lock name pass place prefix quote
    raise reference regenerate review store treat wrap
    build bundle clean compile deploy execute generate launch migrate preview publish release seed serve sync
    typecheck watch abort answer bail cite compare debug downgrade escalate examine exit fail fall flag grep
    inspect investigate kill notify paste pause re-run replace reproduce respond roll squash stash suggest
    summarise summarize warn
    archive assert batch benchmark bisect cache chunk convert debounce decode decrease dedupe drain encode
    escape freeze guard ignore increase invalidate isolate lower measure memoize mock normalize paginate
    parse patch profile prune purge recreate refactor reindex reload require restore revoke rotate round
    sanitize serialize shard sort strip stub throttle trim tune uninstall unpin vacuum validate vendor
    assume choose consult declare define delegate emit exclude expose favor favour omit pick rely replay
    restrict reuse specify stick throw contact ping amend tag label
"""))  # holds every first word lamar.rules.parse takes for an instruction, lest a rule read "When X, Name ...",
# and verbs an agent opens a proposed lesson's action with ("Freeze time with freezegun"), none a tool's name
_FIRST_WORD = re.compile(r"([A-Z][a-z]*(?:'[a-z]+)?)(?![A-Za-z0-9_]|[.\-/][A-Za-z0-9])")


# What an instruction's verb takes next and a name opening a statement does not: an article or
# possessive ("Squash the branch"), an object pronoun ("Stub it out") or a particle ("Roll back").
# These are closed classes, so the list is whole, as no list of verbs can be; "that", "this", "all",
# "every", "over", "in" and "for" are left out, since a name takes them ("Python that ships with
# macOS", "Postgres all the way", "Redis over Memcached").
_TAKEN_BY_VERBS = re.compile(r" (?:the|a|an|my|our|your|their|its|it|them|me|us|back|up|down|out|off|away)\b")


def _mid_sentence(part: str, words: frozenset[str] = _OPENERS, *, instruction: bool = False) -> str:
    """A part as it reads inside the sentence: one written as its own sentence ("Run ruff before
    committing") starts lower case there when its first word is one of `words`, or, in an
    `instruction`, when the word after it is one a verb takes (`_TAKEN_BY_VERBS`); the stored text
    keeps its capital.

    >>> _mid_sentence("Run ruff"), _mid_sentence("CI must pass"), _mid_sentence("Python 3.12 breaks it")
    ('run ruff', 'CI must pass', 'Python 3.12 breaks it')
    >>> _mid_sentence("The build fails", _LEADS), _mid_sentence("A/B tests fail", _LEADS)
    ('the build fails', 'A/B tests fail')
    >>> _mid_sentence("Roll back", instruction=True), _mid_sentence("Postgres needs a vacuum", instruction=True)
    ('roll back', 'Postgres needs a vacuum')
    """
    first = _FIRST_WORD.match(part)
    if first is None:
        return part if not _gerund(part, words) else part[0].lower() + part[1:]
    verb = instruction and _TAKEN_BY_VERBS.match(part, first.end()) is not None or _gerund(part, words)
    if first.group(1).lower() not in words and not verb:
        return part
    return part[0].lower() + part[1:]


# "Disabling tests requires sign-off", "Force-pushing to main is forbidden": the -ing form of an opener names the
# act, no name; "Beijing" or "Spring" is no opener's.
_GERUND = re.compile(r"(?:[A-Z][a-z]*-)?([A-Za-z][a-z]*?)ing(?![\w:-])")  # "Testing: ..." is a label


def _gerund(part: str, words: frozenset[str]) -> bool:
    """Whether `part` opens with the -ing form of one of `words` ("Running" of run, "Disabling" of disable)."""
    found = _GERUND.match(part) if part[:1].isupper() else None
    if found is None:
        return False
    base = found.group(1).lower()
    doubled = base[:-1] if len(base) > 2 and base[-1] == base[-2] else ""  # "running", "committing"
    return any(form in words for form in (base, base + "e", doubled))


# An adverb a rule in title case puts before its verb ("Never Push to main"): the verb after it is no name.
_ADVERBS = re.compile(r"((?i:(?:always|never|only|please|also|first|then|do not|don't|not)\s+)+)")
# A label before a colon ("never: Force push ...", as the rules import writes a rule listed under "## Never"):
# when its words forbid (`lamar.safety.forbidding.forbids`), the rule after it opens with its verb as after an adverb.
_LABEL = re.compile(r"([^:;`\n]{1,60}:\s+)(?=\S)")


def _clauses(part: str, first: frozenset[str] = _OPENERS | _LEADS, *, instruction: bool = True) -> str:
    """`_mid_sentence` of each clause of a part: the first opens with one of `first`, each after a
    semicolon (outside a code span) with an opener or a lead word, and a verb of `_OPENERS` after an
    opening adverb reads in lower case too, as a rule typed in title case means no name by it; in an
    `instruction` (an action), a verb outside `_OPENERS` too, told by the word after it.

    >>> _clauses("Always run `make test`; Never Push to main")
    'always run `make test`; never push to main'
    """
    pieces = re.split(r"(;\s+)", part)
    out: list[str] = []
    for n, piece in enumerate(pieces):
        if n % 2 == 0 and (n == 0 or "".join(out).count("`") % 2 == 0):
            piece = _mid_sentence(piece, first if n == 0 else _OPENERS | _LEADS, instruction=instruction)
            adverbs = (_forbidding_label(piece) if instruction and n == 0 else None) or _ADVERBS.match(piece)
            if adverbs:
                rest = piece[adverbs.end():]
                piece = adverbs.group(1) + _mid_sentence(rest, instruction=instruction)
        out.append(piece)
    return "".join(out)


def opens_with_verb(text: str) -> bool:
    """Whether `text` opens with a verb as an instruction does, by the test that lowers one in mid-sentence.

    >>> opens_with_verb("push to main"), opens_with_verb("Roll back"), opens_with_verb("These break the build")
    (True, True, False)
    """
    capital = text[:1].upper() + text[1:]
    return _mid_sentence(capital, instruction=True) != capital


def _forbidding_label(part: str) -> re.Match[str] | None:
    """The label that opens `part` ("never: ", "Don'ts: ") when its words forbid what follows, else None."""
    found = _LABEL.match(part)
    if found is None:
        return None
    from lamar.safety.forbidding import forbids  # only for a part that opens with a label

    return found if forbids(found.group(1)) else None
