"""The argument parser of `lamar`: one sub-command per lever, each with --help."""

from __future__ import annotations

import argparse
import importlib
import re
from collections.abc import Callable
from typing import Any, NoReturn

from lamar.cli.claude_code import add_commands as add_claude_code
from lamar.cli.mcp_server import add_mcp_command, port_number
from lamar.cli.rules import add_rules_commands
from lamar.cli.session import DEFAULT_STORE, STORE_ENV, UsageError
from lamar.typed import typed_whole


def _later(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command's handler, imported when that command runs: `lamar stats` never loads sleep or html."""
    def run(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(module), name)(args))
    return run


cmd_html = _later("lamar.cli.html", "cmd_html")
cmd_add, cmd_edit, cmd_erase, cmd_report, cmd_retire, cmd_revive = (_later("lamar.cli.levers", n) for n in (
    "cmd_add", "cmd_edit", "cmd_erase", "cmd_report", "cmd_retire", "cmd_revive"))
cmd_recall = _later("lamar.cli.recall", "cmd_recall")
cmd_export, cmd_import = (_later("lamar.cli.move", n) for n in ("cmd_export", "cmd_import"))
cmd_ls, cmd_stats = (_later("lamar.cli.observe", n) for n in ("cmd_ls", "cmd_stats"))
cmd_apply, cmd_review, cmd_sleep = (_later("lamar.cli.review", n) for n in ("cmd_apply", "cmd_review", "cmd_sleep"))
cmd_rejections = _later("lamar.cli.rejections", "cmd_rejections")
cmd_search = _later("lamar.cli.search", "cmd_search")
cmd_show = _later("lamar.cli.show", "cmd_show")
cmd_ui = _later("lamar.cli.ui", "cmd_ui")
cmd_whatif = _later("lamar.cli.whatif", "cmd_whatif")

_EPILOG = f"""\
The store is --store PATH, else ${STORE_ENV}, else the one Claude Code's hooks (or the
Lamar plugin) use in this repository when they name another, said on stderr, else
{DEFAULT_STORE}.
A .json path is a JSON store, .db/.sqlite/.sqlite3 SQLite, postgresql://... PostgreSQL.
Exit status: 0 ok, 1 usage error (the message says what to do), 2 store error or a model
that failed during sleep, 3 a bug in Lamar (one line: please report it).
"""


class Parser(argparse.ArgumentParser):
    """argparse with exit status 1 for usage errors (argparse's own default is 2, our store error)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse takes `-0.5e0` (and `-1e-1`) for an option, as only its plain forms are numbers
        # to it: a word that starts like a negative number is an argument (`lamar report EP -0.5e0`).
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._words = list(args or [])  # a sub-command's own words, for error() to read
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument COMMAND: invalid choice: "):
            word = message.split("'")[1] if message.count("'") >= 2 else ""
            if word in _INSTEAD:
                message += f"\n`lamar {word}` is not a command: {_INSTEAD[word]}"
            elif close := _close_command(self, word):
                message += f"\ndid you mean `lamar {close}`?"  # as a mistyped option is answered
        elif message.startswith("the following arguments are required: "):
            missing = message.split(": ", 1)[1]
            said = _swallowed(self, missing)
            if not said and missing == "REPORT.json":  # `lamar review` right after a `lamar sleep` that saved none
                said = ("\nREPORT.json is the file `lamar sleep --out REPORT.json` saves; `lamar stats` names the last "
                        "one a sleep saved")
            message += said
        raise UsageError(f"{message}\n{self.format_usage().strip()}\n(run `{self.prog} --help` for details)")


def _close_command(parser: argparse.ArgumentParser, word: str) -> str:
    """The command `word` is a typo of (`shw` for `show`), or ""."""
    import difflib

    commands = [name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                for name in action.choices]
    return next(iter(difflib.get_close_matches(word, commands, n=1)), "")


def _swallowed(parser: argparse.ArgumentParser, missing: str) -> str:
    """Why a positional given after a list option (`--scope k=v TEXT`) is missing: the list took it."""
    lists = {name: action.metavar or "ITEM" for action in parser._actions if action.nargs in ("+", "*")
             for name in action.option_strings}
    words: list[str] = getattr(parser, "_words", [])
    last = max((i for i, word in enumerate(words) if word in lists), default=-1)
    taken = 0  # the words the list took: up to the next option
    while last >= 0 and last + 1 + taken < len(words) and not words[last + 1 + taken].startswith("-"):
        taken += 1
    if taken < 2:
        return ""  # no list option, or it took one word, its own: the positional was left out
    option = words[last]
    return (f"\n{option} reads every word after it, up to the next option, as its list: put {missing} "
            f"before {option}, or end the list with -- (`{parser.prog} ... {option} {lists[option]} -- {missing}`)")


# The Python calls and neighbouring tools a reader of the docs tries as commands, and where they live.
_INSTEAD = {
    "evidence": "a lesson's evidence is in `lamar show ID`, and every lesson's verdict and interval in `lamar ls`",
    "experiences": "`lamar ls` lists the lessons",
    "lessons": "`lamar ls` lists the lessons, `lamar search TEXT` the ones that hold TEXT",
    "list": "`lamar ls` lists the lessons",
    "get": "`lamar show ID` prints one lesson in full",
    "status": "`lamar stats` sums up the store and the last sleep; `lamar claude-code status` checks the Claude Code "
              "hooks",
    "install": "`lamar claude-code install` puts the hooks into Claude Code",
    "uninstall": "`lamar claude-code uninstall` takes Lamar's hooks out of Claude Code",
    "hook": "`lamar claude-code hook` handles one Claude Code hook event",
    "settle": "`lamar claude-code settle` lets git settle the watched episodes",
    "trust": "`lamar claude-code trust` trusts this repository's .claude/lamar.toml",
    "preview": "`lamar recall k=v ... --dry-run` shows what a recall would choose, logging nothing",
    "gym": "the memory gym is `python -m lamar.gym`",
    "init": "a store is created by the first `lamar add --create --precondition .. --action ..` "
            "(or `lamar import FILE`)",
    "help": "`lamar --help` lists the commands, `lamar COMMAND --help` explains one",
}


def _reason(text: str) -> str:
    """A --reason for the audit trail: said in words (its length is the engine's to hold, as for
    every caller: `lamar.arguments.reason`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the reason is empty: say in a few words why (it is kept in the audit "
                                         "trail), or leave --reason out for the default")
    return text


def _by(text: str) -> str:
    """An --by for the audit trail: a name, said here in the flag's terms (the engine's own check,
    `lamar.arguments.who`, speaks of Python's None)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the name is empty: say who erases the lesson (it is kept in the audit "
                                         "trail), or leave --by out for your OS user name")
    return text


def _positive(text: str) -> int:
    value = typed_whole(text)  # int() also reads `1_0` as 10 and other scripts' digits as ours
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 in digits (such as 20), got {text!r}")
    return value


def _slots(text: str) -> int:
    value = typed_whole(text)  # the most slots is the engine's to refuse, with what to pass
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a number of slots, a whole number >= 0 in digits "
                                         f"(such as 3), got {text!r}")
    return value


def _store_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: --store may come before or after the sub-command without one erasing the other.
    parser.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS,
                        help=f"the store (default: ${STORE_ENV}, else the one Claude Code's hooks here use, else "
                             f"{DEFAULT_STORE})")


def _force_option(parser: argparse.ArgumentParser,
                  what: str = "overwrite --out even if it is a store or a file Lamar did not write") -> None:
    parser.add_argument("--force", action="store_true", help=what)


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON (unknown bounds are null)")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="lamar", description="Watch and steer what an agent believes: lessons, evidence, "
                    "verdicts.", epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    from lamar import __version__

    parser.add_argument("--version", action="version", version=f"lamar {__version__}")
    _store_option(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    def command(name: str, help_text: str, handler: object, *, json: bool = False) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        _store_option(sub)
        if json:
            _json_option(sub)
        sub.set_defaults(handler=handler)
        return sub

    command("stats", "lessons by status and verdict, episodes, reports, holdout rate and cost, store size, the last "
            "sleep and what its mining did",
            cmd_stats, json=True)

    ls = command("ls", "one line per lesson: id, verdict, lift and interval, counts, scope, text", cmd_ls, json=True)
    ls.add_argument("--verdict", choices=["helps", "harms", "unknown"], help="only lessons with this verdict")
    ls.add_argument("--status", choices=["candidate", "active", "retired"], help="only lessons with this status")
    ls.add_argument("--scope", nargs="+", metavar="KEY=VALUE", action="extend",
                    help="only lessons whose scope has these fields (e.g. --scope project=trace)")
    ls.add_argument("--width", type=_positive, default=60, help="characters of lesson text to show (default 60)")

    search = command("search", "the lessons whose text, scope or id hold every word of TEXT (any case)",
                     cmd_search, json=True)
    search.add_argument("text", nargs="+", metavar="TEXT", help="the words to look for")
    search.add_argument("--status", choices=["candidate", "active", "retired"], help="only lessons with this status")
    search.add_argument("--scope", nargs="+", metavar="KEY=VALUE", action="extend",
                        help="only lessons whose scope has these fields (e.g. --scope project=trace)")
    search.add_argument("--width", type=_positive, default=60, help="characters of lesson text to show (default 60)")

    show = command("show", "one lesson in full: provenance, evidence over time, episodes", cmd_show, json=True)
    show.add_argument("id", help="the lesson's id (see `lamar ls`)")
    show.add_argument("--episodes", type=_positive, default=10, metavar="N", help="list the latest N episodes (10)")
    show.add_argument("--all", action="store_true", help="list every episode the lesson was injected in")

    add = command("add", "add a lesson by hand, or many from a file (eligible at once, as cold arms)", cmd_add,
                  json=True)
    add.add_argument("--precondition", help="when the lesson applies")
    add.add_argument("--action", help="what to do")
    add.add_argument("--rationale", default="", help="why")
    add.add_argument("--scope", nargs="+", metavar="KEY=VALUE", action="extend",
                     help="where it is eligible (e.g. --scope project=trace language=swift)")
    add.add_argument("--status", choices=["active", "candidate"], default="active", help="(default: active)")
    add.add_argument("--from", dest="source", metavar="FILE",
                     help="add every lesson of FILE (- for stdin): JSON Lines, one object a line, or Markdown, "
                     "one bullet a lesson ('- When X, do Y, because Z'); a bad line adds nothing")
    add.add_argument("--create", action="store_true", help="create the store if it does not exist yet")
    add.add_argument("-q", "--quiet", action="store_true", help="print only the new ids")

    edit = command("edit", "a new version of a lesson under the same id; its evidence restarts (a new treatment)",
                   cmd_edit, json=True)
    edit.add_argument("id", help="the lesson's id (or the start of it)")
    edit.add_argument("--precondition", help="the new precondition (when it applies)")
    edit.add_argument("--action", help="the new action (what to do)")
    edit.add_argument("--rationale", help="the new rationale (why)")
    edit.add_argument("--scope", nargs="+", metavar="KEY=VALUE", action="extend",
                      help="the new scope, whole (e.g. --scope project=trace language=swift; '*': everywhere)")
    edit.add_argument("--keep-evidence", action="store_true",
                      help="a wording fix: keep the evidence (refused when the action or the scope changes)")
    edit.add_argument("--reason", type=_reason, default="edited by hand", help="recorded in the audit trail")

    recall = command("recall", "choose the lessons for a context and log the episode (--dry-run: show what it "
                     "would choose and why, writing nothing)", cmd_recall, json=True)
    recall.add_argument("context", nargs="*", metavar="KEY=VALUE", help="the context (e.g. project=trace task=build)")
    recall.add_argument("--k", type=_slots, metavar="K", help="slots for this recall (default: the engine's, 3)")
    recall.add_argument("--dry-run", action="store_true",
                        help="show every eligible lesson, whether it is wanted, its estimate, coin and bounds")
    recall.add_argument("-q", "--quiet", action="store_true",
                        help="print only the episode id; the lessons (the prompt) go to stderr, for a script "
                        "to capture with 2>FILE")

    retire = command("retire", "stop injecting a lesson (kept for the audit trail)", cmd_retire)
    retire.add_argument("id", help="the lesson's id (or the start of it)")
    retire.add_argument("--reason", type=_reason, default="retired by hand", help="recorded in the audit trail")
    revive = command("revive", "make a retired lesson active again", cmd_revive)
    revive.add_argument("id", help="the lesson's id (or the start of it)")
    revive.add_argument("--reason", type=_reason, default="revived by hand", help="recorded in the audit trail")
    erase = command("erase", "remove a lesson's text from every event and copy of the store, keeping its "
                    "evidence (it retires; the audit records who erased it and when)", cmd_erase, json=True)
    erase.add_argument("id", help="the lesson's id (or the start of it)")
    erase.add_argument("--contexts", action="store_true",
                       help="also blank the contexts of the episodes the lesson was eligible in")
    erase.add_argument("--by", metavar="NAME", type=_by, help="who erases it, for the audit (default: the OS user)")
    erase.add_argument("--reason", type=_reason, default="erased by hand",
                       help="recorded in the audit trail (keep the erased text out of it)")

    report = command("report", "report an episode's outcome (from a script or a git hook)", cmd_report)
    report.add_argument("episode", help="the episode id that recall returned")
    report.add_argument("signal", help="shipped, accepted, reasked, corrected, reverted, or a number in [-1, 1]")
    report.add_argument("--replace", action="store_true", help="replace an outcome already reported")

    sleep = command("sleep", "propose retirements, merges, contradictions (and, with a model, new lessons); "
                    "changes nothing", cmd_sleep, json=True)
    sleep.add_argument("--traces", nargs="+", metavar="FILE.jsonl",
                       help="traces to mine for candidate lessons: one or more JSON Lines files")
    sleep.add_argument("--model", metavar="PROVIDER:MODEL",
                       help="the model that mines them: anthropic:MODEL, openai:MODEL or ollama:MODEL")
    sleep.add_argument("--max-model-calls", type=_positive, metavar="N",
                       help="the most model calls mining may make; traces that need more make none and "
                            "the mining error says how many they need (default: no limit)")
    sleep.add_argument("-o", "--out", metavar="REPORT.json",
                       help="save the report here, for review and apply (- for stdout)")
    _force_option(sleep)

    review = command("review", "approve or reject each proposal of a sleep report, on stdin", cmd_review)
    review.add_argument("report", metavar="REPORT.json", help="a sleep report, as `lamar sleep --out` saves it")
    review.add_argument("--again", action="store_true", help="review every proposal, not only undecided ones")

    apply = command("apply", "carry out a report's approved proposals (all if it was never reviewed)",
                    cmd_apply, json=True)
    apply.add_argument("report", metavar="REPORT.json", help="a sleep report, as `lamar sleep --out` saves it")
    apply.add_argument("--only", nargs="+", metavar="ID", action="extend", help="apply just these proposals")
    apply.add_argument("--confirm-warned", action="store_true",
                       help="apply a warned candidate too (one whose lesson would have the agent do harm)")

    rejections = command("rejections", "the proposals a person rejected, which sleep leaves out until what they "
                         "rest on changes", cmd_rejections, json=True)
    rejections.add_argument("--undo", metavar="PROPOSAL",
                            help="forget the rejection of this proposal id (compact: of compactions), so sleep may "
                            "propose it again")

    export = command("export", "copy every event of the store into another store (any backend)", cmd_export,
                     json=True)
    export.add_argument("-o", "--out", required=True, metavar="FILE", help="a .json, .db or postgresql:// target")
    export.add_argument("--append", action="store_true", help="allow a target that already holds events")
    _force_option(export, "replace --out when it is a file Lamar did not write (a store is never replaced: "
                  "see --append)")

    import_ = command("import", "copy every event of another store into this one", cmd_import, json=True)
    import_.add_argument("file", metavar="FILE", help="the store to read: .json, .db or postgresql://")
    import_.add_argument("--append", action="store_true", help="allow a store that already holds events")

    html = command("html", "write a self-contained HTML page: forest plot, injections over time, table",
                   cmd_html)
    html.add_argument("-o", "--out", required=True, metavar="FILE.html", help="the page to write (- for stdout)")
    _force_option(html)

    ui = command("ui", "a local web app: lessons, episodes, sleep review, levers (needs lamar[ui])", cmd_ui)
    ui.add_argument("--port", type=port_number, default=0, help="port on 127.0.0.1 (default: a free one)")
    ui.add_argument("--no-browser", action="store_true", help="print the address instead of opening a browser")
    ui.add_argument("--report", metavar="REPORT.json",
                    help="the sleep report to review (default: beside the store, STORE.sleep-report.json)")
    ui.add_argument("--traces", nargs="+", metavar="FILE.jsonl",
                    help="traces for sleep to mine (with --model): one or more JSON Lines files")
    ui.add_argument("--model", metavar="PROVIDER:MODEL", help="the model sleep mines with (with --traces)")
    ui.add_argument("--max-model-calls", type=_positive, metavar="N",
                    help="the most model calls Run sleep's mining may make, as `lamar sleep` takes it "
                         "(default: no limit)")

    whatif = command("whatif", "what another policy would have got over the logged episodes (no memory, without "
                     "a lesson, proven lessons only, another holdout or k), from the logged propensities",
                     cmd_whatif, json=True)
    whatif.add_argument("--policy", action="append", metavar="NAME",
                        help="logged, none, proven, today, without:ID, holdout:Q or k:K; repeat for several "
                             "(default: logged, none, proven, today, holdout:0, k:1)")
    whatif.add_argument("--estimator", action="append", choices=["ips", "snips", "dr", "pi", "pi-dr"],
                        help="the estimators to show; repeat for several (default: dr)")
    whatif.add_argument("--since", metavar="WHEN", help="only episodes since WHEN: an ISO date, seconds since "
                        "the epoch, or an age such as 7d")
    whatif.add_argument("--scope", nargs="+", metavar="KEY=VALUE", action="extend",
                        help="only episodes whose context has these fields (e.g. --scope project=trace)")
    whatif.add_argument("--anytime", action="store_true",
                        help="show each estimate's confidence sequence, which holds however often you ask as the log "
                             "grows, instead of its 95%% interval for this one reading (--json gives both)")

    add_mcp_command(command)
    add_claude_code(command)
    add_rules_commands(command)
    return parser
