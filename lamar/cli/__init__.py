"""The `lamar` command: watch and steer what the agent believes (`lamar --help`)."""

from __future__ import annotations

import os
import sys

# Nothing of Lamar (nor typing) loads here: `main` loads it, where a Ctrl+C in the first moments is caught.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_STORE = 2
EXIT_BUG = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl+C stopped


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `lamar` command.

    Exit status: 0 ok; 1 a usage error, with a message that says what to do; 2 a store
    error (missing, corrupt, unreadable, unwritable), or a model that failed during sleep;
    3 a bug in Lamar (reported in one line, never a traceback); 4 `claude-code status` found a hook that FAILS.

    Args:
        argv: the arguments after the program name (default: sys.argv[1:]).

    Returns:
        The exit status: 0 ok, 1 usage error, 2 store or model error, 3 a bug, 4 a hook that fails.
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:  # while the modules load, before `_run` catches it: one line, no traceback
        print("lamar: error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    _fill_closed_streams()
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:2] == ["claude-code", "hook"] and not {"-h", "--help"} & set(args_list):
        # runs on every prompt: skip building the whole parser
        from lamar.cli.claude_code import fast_hook

        return fast_hook(args_list[2:])
    from lamar.cli.redirected import whole_stdout
    from lamar.safety.terminal import TerminalStream

    # Every line any command prints passes one neutraliser: stored text (scopes, provenance,
    # reasons, proposal ids) must not reach the terminal as control sequences.
    with whole_stdout():
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = TerminalStream(sys.stdout), TerminalStream(sys.stderr)
        try:
            return _run(args_list)
        finally:
            sys.stdout, sys.stderr = saved


def _fill_closed_streams() -> None:
    """A standard stream closed before start (`lamar ls >&-`, `<&-`) is None in Python: read it as
    empty and write into nothing, as print() does. Holding its descriptor on the null device also
    keeps a store opened later from landing on descriptor 0, 1 or 2, where stray output would go."""
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115 - lives as long as the process


def _unrecognized(args: argparse.Namespace, extras: list[str]) -> str:
    """argparse's message for words no option took; for `lamar add "when X" "do Y"`, the command
    that says it with options."""
    import shlex

    message = f"unrecognized arguments: {' '.join(extras)}"
    words = [word for word in extras if not word.startswith("-")]
    if getattr(args, "command", None) == "add" and len(words) in (2, 3) and len(words) == len(extras) \
            and not (args.precondition or args.action or args.source):
        named = zip(("--precondition", "--action", "--rationale"), words)
        command = " ".join(f"{option} {shlex.quote(word)}" for option, word in named)
        message += f"\nlamar add takes the lesson as options: lamar add {command}"
    return message


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The sub-command's parser (`lamar ls`, `lamar claude-code status`), whose usage and --help fit
    the words it did not take better than the top level's."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) in action.choices:
            return _chosen(action.choices[getattr(args, action.dest)], args)
    return parser


def _intermixed(parser: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]) -> bool:
    """Words after an option that belong to the command's one list of words (`lamar recall
    project=trace --dry-run task=build`, `lamar search cache --status active flaky`): argparse
    stops filling that list at the first option; they join it, as typed. False when they cannot."""
    lists = [action for action in parser._actions if not action.option_strings and action.nargs in ("*", "+")]
    if len(lists) != 1 or any(word.startswith("-") for word in extras):
        return False
    setattr(args, lists[0].dest, [*(getattr(args, lists[0].dest) or []), *extras])
    return True


def _close_option(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """A mistyped option's likely spelling (`--stauts`: --status), from the options this command takes."""
    import difflib

    options = [name for action in parser._actions for name in action.option_strings if name.startswith("--")]
    for word in extras:
        close = difflib.get_close_matches(word.partition("=")[0], options, n=1) if word.startswith("--") else []
        if close:
            return f" (did you mean {close[0]}?)"
    return ""


def _run(argv: list[str]) -> int:
    from lamar._errors import EventConflict, LamarError, ModelError, StoreError
    from lamar.cli.redirected import OutputFailed
    from lamar.cli.session import UsageError

    # Errors about what the store (or a model, or the file output goes to) did, as opposed to what the user typed.
    store_errors = (StoreError, EventConflict, ModelError, OutputFailed)
    try:
        # Building the parser takes a noticeable moment: a Ctrl+C during it is still one line.
        from lamar.cli.parser import build_parser

        parser = build_parser()
        args, extras = parser.parse_known_args(argv)
        if extras:
            chosen = _chosen(parser, args)
            if not _intermixed(chosen, args, extras):
                chosen.error(_unrecognized(args, extras) + _close_option(chosen, extras))
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            raise UsageError("name a command, e.g. `lamar stats` (listed above)")
        status = int(handler(args))
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers below, not at exit
        return status
    except ModelError as exc:  # the adapters' advice names a Python argument; a shell user has the environment
        from lamar.models.protocol import PASS_API_KEY

        return _fail(str(exc).replace(PASS_API_KEY, " in the environment"), EXIT_STORE)
    except BrokenPipeError:
        return _reader_gone()
    except UsageError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except store_errors as exc:
        return _fail(str(exc) + _hooks_hint(exc), EXIT_STORE)
    except LamarError as exc:  # an unknown id, a bad signal, a duplicate report: the input was wrong
        return _fail(str(exc), EXIT_USAGE)
    except ImportError as exc:  # an optional backend or model SDK that is not installed
        return _fail(str(exc), EXIT_STORE)
    except OSError as exc:  # a file we were asked to write (--out) could not be written
        return _fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "), EXIT_STORE)
    except KeyboardInterrupt as exc:  # a command that was interrupted midway says what it left done
        return _fail(str(exc) or "interrupted", EXIT_INTERRUPTED)
    except RecursionError:
        return _fail("the input is nested too deep to read", EXIT_USAGE)
    except RuntimeError as exc:
        # pathlib's expanduser and home() without HOME, as a user the password database lacks: as a
        # client may start `lamar mcp` in a container. Its message is fixed, so it is told from a bug.
        if str(exc) != "Could not determine home directory.":
            return _fail(f"unexpected {type(exc).__name__}: {exc} (a bug in Lamar: please report it)", EXIT_BUG)
        return _fail("no home folder is known here (HOME is unset and the password database has no home for this "
                     "user): give full paths (the store's with --store) instead of ones under ~, or set HOME",
                     EXIT_USAGE)
    except Exception as exc:  # noqa: BLE001 - a bug: still one line, never a traceback
        return _fail(f"unexpected {type(exc).__name__}: {exc} (a bug in Lamar: please report it)", EXIT_BUG)


def _hooks_hint(error: Exception) -> str:
    """For a missing store that --store named, the store Claude Code's hooks (or its plugin) read here, when
    it is another one: without --store the command reads that store already (`session.store_source`)."""
    from pathlib import Path

    from lamar.cli.session import DEFAULT_STORE, STORE_ENV, NoStore, hooks_store

    if not isinstance(error, NoStore) or os.environ.get(STORE_ENV):
        return ""
    try:
        found = hooks_store(DEFAULT_STORE, os.getcwd())
    except Exception:  # noqa: BLE001 - a hint to an error: a broken settings file must not replace the error
        return ""
    if found is None:
        return ""
    hooks = Path(found[0]).expanduser()
    if hooks == error.path or str(hooks) in str(error):  # the store asked for, or named already
        return ""
    return f"; Claude Code's hooks here read {hooks}{found[1]}: pass --store {hooks}"


def _reader_gone() -> int:
    """The reader of our output went away (`lamar ls | head -1`): stop quietly with status 0,
    as `cat` and `grep` do. Python would flush stdout again at exit and complain about the
    same pipe, so stdout is pointed at the null device first."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a real file (captured in a test): nothing to silence
        pass
    return EXIT_OK


def _fail(message: str, status: int) -> int:
    from lamar.safety import scrub

    # A credential in a location or a file name the user typed is not echoed back.
    one_line = scrub(message)[0]
    print(f"lamar: error: {one_line}", file=sys.stderr)
    return status


__all__ = ["EXIT_BUG", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_STORE", "EXIT_USAGE", "main"]
