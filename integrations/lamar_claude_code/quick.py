"""The hook command: hands the event to a warm `lamar_claude_code.daemon` over a socket, else handles it here."""

from __future__ import annotations

import os
import sys
import time

VERSION = b"LAMAR-HOOK-1"
DEFAULT_STORE = "~/.lamar/experience.json"  # as lamar.cli.claude_code has it
MAX_PAYLOAD = 1_000_000  # bytes, as the in-process hook reads
_CONNECT = 0.5  # seconds to reach the daemon before handling the event here
_ANSWER = 9.0  # seconds to wait for its answer: Claude Code stops a hook at 10
_LOG_LIMIT = 512 * 1024  # bytes, as lamar_claude_code.state has it: the older half is dropped past this
_LOG_WAIT = 1.0  # seconds for the log's lock, as lamar_claude_code.state has it (LOG_WAIT)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def named_store(argv: list[str]) -> str | None:
    """The store the hook command names (--store PATH or --store=PATH, the last one given), or None."""
    store = None
    for i, arg in enumerate(argv):
        if arg == "--store" and i + 1 < len(argv):
            store = argv[i + 1]
        elif arg.startswith("--store="):
            store = arg.split("=", 1)[1]
    return store


def named_holdout(argv: list[str]) -> str | None:
    """The holdout the hook command names (--holdout Q, from `install --holdout`), as written, or None (the
    engine's default). Read as a number only where the engine opens, so a hand-edited one fails open there."""
    holdout = None
    for i, arg in enumerate(argv):
        if arg == "--holdout" and i + 1 < len(argv):
            holdout = argv[i + 1]
    return holdout


def plugin_holdout(environ: os._Environ[str] | dict[str, str]) -> str | None:
    """The plugin's `holdout` option, or None (the engine's default) when it is unset."""
    configured = environ.get("CLAUDE_PLUGIN_OPTION_HOLDOUT", "").strip()
    return configured if configured and not configured.startswith("${") else None


def daemon_key(store: str, holdout: str | None) -> str:
    """What names the daemon of `store` at `holdout`: a daemon at another holdout is never asked."""
    return store if holdout is None else f"{store}\0holdout={holdout}"


def empty_store(argv: list[str]) -> str | None:
    """Why the hook refuses its command line when it names an empty store (`--store ""`), else None."""
    named = named_store(argv)
    if named is None or named.strip():
        return None
    # An empty `--store "$UNSET"` taken as "not given" would write this turn to another store.
    return ("lamar hook: --store is empty, so this event was skipped: name a store in the hook command "
            "(lamar claude-code install --store PATH), or leave --store out to use $LAMAR_STORE, else "
            f"{DEFAULT_STORE}\n")


def store_of(argv: list[str], environ: os._Environ[str] | dict[str, str]) -> str:
    """The store the hook command names (--store PATH), else $LAMAR_STORE, else the default, absolute."""
    store = named_store(argv) or environ.get("LAMAR_STORE") or DEFAULT_STORE
    if "://" in store or store == ":memory:":
        return store
    return expanded(store)


def expanded(path: str) -> str:
    """`path` absolute, with ~ read as the home folder; left as it is ("~/...") when there is none
    (HOME unset, and the account has none), never made a folder named ~ in the project."""
    path = os.path.expanduser(path)
    return path if _in_missing_home(path) else os.path.abspath(path)


def _in_missing_home(path: str) -> bool:
    """Whether `path`, once expanded, still starts with the user's own ~: there is no home folder.
    A "~name" that names no account is a file name, as it always was."""
    return path == "~" or path.startswith(("~/", "~" + os.sep))


def homeless(store: str) -> str | None:
    """Why the hook refuses a store it has no home folder to put in (see `expanded`), else None."""
    if not _in_missing_home(store):
        return None
    return (f"lamar hook: no home folder for {store} (HOME is unset and the account has none), so this event "
            "was skipped: set HOME, or name the store (--store PATH, or the plugin's store option)\n")


def plugin_store(environ: os._Environ[str] | dict[str, str]) -> str:
    """The plugin's store: its `store` option when set, else a SQLite store in the user's data folder."""
    configured = environ.get("CLAUDE_PLUGIN_OPTION_STORE", "").strip()
    # An option left unset can reach a server's env as the literal reference: treat it as unset.
    if configured and not configured.startswith("${"):
        if "://" in configured or configured == ":memory:":
            return configured
        return expanded(configured)
    if environ.get("XDG_DATA_HOME"):
        data = environ["XDG_DATA_HOME"]
    elif sys.platform == "darwin":
        data = "~/Library/Application Support"
    else:
        data = "~/.local/share"
    return expanded(os.path.join(data, "lamar", "experience.db"))


def socket_path(store: str, environ: os._Environ[str] | dict[str, str] | None = None) -> str | None:
    """The daemon's socket for one store: in a folder only this user can enter (None: no such folder)."""
    environ = os.environ if environ is None else environ
    if not hasattr(os, "getuid"):
        return None  # not POSIX: every event is handled in its own process
    base = environ.get("XDG_RUNTIME_DIR") or "/tmp"
    folder = os.path.join(base, f"lamar-{os.getuid()}")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    info = os.lstat(folder)
    if info.st_uid != os.getuid() or info.st_mode & 0o777 != 0o700 or not os.path.isdir(folder):
        return None  # someone else's folder: never talk to a socket they could have placed
    digest = 0xCBF29CE484222325  # FNV-1a: hashlib costs an import here, and this only names a file
    for byte in store.encode("utf-8", "surrogateescape"):
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return os.path.join(folder, f"cc-{digest:016x}.sock")


def identity() -> bytes:
    """This file's size and time: a daemon started from other code refuses the event."""
    info = os.stat(__file__)
    return f"{info.st_size}-{info.st_mtime_ns}".encode()


def ask(path: str, raw: bytes, arrived: float, create: bool = False) -> bytes | None:
    """The daemon's answer to one event, or None when there is no daemon to answer.

    With `create` (the plugin) a missing store is created; otherwise it is a logged failure.
    """
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(_CONNECT)
        sock.connect(path)
        sock.settimeout(_ANSWER)
        sock.sendall(b"%s %s %r %d\n" % (VERSION, identity(), arrived, create) + raw)
        sock.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        sock.close()
    answer = b"".join(chunks)
    if not answer.startswith(b"ok\n"):
        return None  # a stale daemon, or one that stopped before answering
    return answer[3:]


def start_daemon(store: str, holdout: str | None = None) -> None:
    """Start the daemon for `store` (its engine at `holdout`), detached: it outlives this process and stops when
    idle."""
    import subprocess

    tuning = [] if holdout is None else ["--holdout", holdout]
    with open(os.devnull, "r+b") as null:
        subprocess.Popen([sys.executable, "-m", "lamar_claude_code.daemon", "--store", store, *tuning], stdin=null,
                         stdout=null, stderr=null, start_new_session=True, close_fds=True)


def starts_session(raw: bytes) -> bool:
    """Whether the event starts a session the user sees, as `lamar_claude_code.notice` has it (whose
    package may be what failed to load)."""
    import json

    try:
        event = json.loads(raw)
    except ValueError:
        return False
    return (isinstance(event, dict) and event.get("hook_event_name") == "SessionStart"
            and event.get("source") != "compact")


def cannot_start(store: str, exc: BaseException, plugin: bool) -> str:
    """The SessionStart answer of a hook whose Python cannot load Lamar: a systemMessage, which Claude
    Code shows the user and never sends to Claude. Logged only, it left the user believing Lamar learned."""
    import json

    fix = ("set the plugin's python option to the interpreter where Lamar is installed (/plugin configure "
           "lamar@lamar inside Claude Code)" if plugin else
           f"reinstall Lamar for {sys.executable}, or run `lamar claude-code install` again with the `lamar` "
           "of the environment where Lamar is installed")
    message = (f"Lamar is off, so no lessons are recalled and nothing is learned: {sys.executable} cannot load "
               f"Lamar's hook ({type(exc).__name__}: {str(exc)[:300]}). To turn it on, {fix}. "
               f"Details: {_log_of(store)}")
    return json.dumps({"systemMessage": " ".join(message.split())})  # ASCII: any stdout encoding writes it


def _log_of(store: str) -> str:
    """The hook log beside a file store, else the home folder's (as `lamar_claude_code.state.sidecar` has it)."""
    if "://" in store or store == ":memory:":
        return os.path.join(os.path.expanduser("~/.lamar"), "claude-code.log")
    return os.path.expanduser(store) + ".claude-code.log"


def _note(store: str, message: str) -> None:
    """One line in the hook log beside a file store, where `lamar claude-code status` shows it; a
    log the store's folder cannot take sends it to the home folder's log, as the hook's own writer
    does (its module may be what failed to load, so the rule is repeated here in a few lines)."""
    home = os.path.join(os.path.expanduser("~/.lamar"), "claude-code.log")
    log = _log_of(store)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S ")
    text = " ".join(message.split())[:500]
    try:
        _append(log, stamp + text + "\n")
    except OSError as exc:
        if log != home:
            try:
                os.makedirs(os.path.dirname(home), mode=0o700, exist_ok=True)
                _append(home, f"{stamp}{log} could not be written ({exc.strerror or exc}): {text}\n")
            except OSError:
                pass


def _append(path: str, line: str) -> None:
    """The hook's own writer's rule (`lamar_claude_code.state`), which may be what failed to load:
    appends share the log's lock and a trim holds it alone, so an install that stays broken keeps
    the newest lines, the ones `status` shows, in a bounded log, and loses none to another's trim."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: appended and trimmed unlocked
        fcntl = None  # type: ignore[assignment]
    # never through a link planted beside a store in a folder others may write (state._open_private)
    lock = os.open(path + ".lock", os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o600)
    try:
        if fcntl is not None and not _held(lock, fcntl.LOCK_SH):
            raise TimeoutError(f"another process held its lock past {_LOG_WAIT:g} s")  # the home log takes it
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o600)
        try:
            os.write(handle, line.encode("utf-8", "replace"))
        finally:
            os.close(handle)
        try:  # the line is written: a trim that fails, or is not let in, is tried by the next one
            if os.stat(path).st_size > _LOG_LIMIT and (fcntl is None or _held(lock, fcntl.LOCK_EX)) \
                    and os.stat(path).st_size > _LOG_LIMIT:  # again: another writer may have trimmed it meanwhile
                _shrink(path)
        except OSError:
            pass
    finally:
        os.close(lock)


def _held(fd: int, how: int) -> bool:
    """Whether `fd` got its `flock` within _LOG_WAIT, polled as `lamar_claude_code.state.held` does:
    a stopped or stuck holder must cost the hook its line's wait, never the turn."""
    import fcntl

    deadline = time.monotonic() + _LOG_WAIT
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(pause, left))
            pause = min(2 * pause, 0.02)


def _shrink(path: str) -> None:
    """Drop the older half of the log, at a line's end, by an atomic replace (called under the lock)."""
    with open(path, "rb") as handle:
        data = handle.read()
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        try:
            os.unlink(tmp)  # a copy this process id left, or a link planted there: made new below
        except FileNotFoundError:
            pass
        with open(os.open(tmp, os.O_WRONLY | os.O_EXCL | os.O_CREAT | _NOFOLLOW, 0o600), "wb") as handle:
            handle.write(data[data.find(b"\n", len(data) // 2) + 1 :])
            handle.flush()
            os.fsync(handle.fileno())  # the bytes are on disk before the name points at them
        os.replace(tmp, path)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def write_out(answer: bytes) -> None:
    """The daemon's answer, straight to descriptor 1: no buffer is left to flush at exit, and a
    reader that is gone (or a process started without stdout) gets nothing and no traceback."""
    view = memoryview(answer)
    try:
        while view:
            view = view[os.write(1, view):]
    except OSError:
        pass


def main(argv: list[str] | None = None) -> int:
    """Handle one hook event: the command `lamar claude-code install` or the plugin puts in the settings.

        <python> -S .../lamar_claude_code/quick.py [--store PATH] [--holdout Q]   (lamar claude-code install)
        <python> -S .../lamar_claude_code/quick.py --plugin           (the plugin: its options name the store)

    Run with -S and only C modules imported, the command starts faster than a bare `python -c pass`;
    the daemon holds the engine open, so a prompt costs a socket round trip. Without a daemon (the
    first event, or after one stopped) it starts one, detached, and handles this event itself:
    nothing is lost, only slower. Fails open as `lamar_claude_code.hook.run` does: exit 0, never 2.
    """
    if sys.path and os.path.dirname(os.path.abspath(__file__)) == os.path.abspath(sys.path[0] or "."):
        del sys.path[0]  # run as a script: this package's modules must not be importable by bare name
    argv = sys.argv[1:] if argv is None else argv
    if "-h" in argv or "--help" in argv:  # `install` and `status` run this to see that the hook can start
        import site

        site.main()
        try:
            import lamar_claude_code.hook  # noqa: F401 - what an event without a daemon needs
        except Exception as exc:  # noqa: BLE001 - reported, as the check's answer
            sys.stderr.write(f"this Python cannot import Lamar's hook: {type(exc).__name__}: {exc}\n")
            return 1
        sys.stdout.write("usage: quick.py [--store PATH | --plugin] [--holdout Q]: one Claude Code hook event on "
                         "stdin (Lamar)\n")
        return 0
    refusal = empty_store(argv)
    if refusal:  # no store to log beside: exit 1 is Claude Code's non-blocking error, shown to the user
        sys.stderr.write(refusal)
        return 1
    arrived = time.time()
    create = "--plugin" in argv
    store = plugin_store(os.environ) if create else store_of(argv, os.environ)
    refusal = homeless(store)
    if refusal:  # exit 1 is a non-blocking error Claude Code shows; the plugin's launcher shows stderr itself
        sys.stderr.write(refusal)
        return 0 if create else 1
    raw = sys.stdin.buffer.read(MAX_PAYLOAD + 1) if sys.stdin is not None else b""  # None: started without stdin
    holdout = plugin_holdout(os.environ) if create else named_holdout(argv)
    path = socket_path(daemon_key(store, holdout))
    answer = ask(path, raw, arrived, create) if path and store != ":memory:" else None
    if answer is not None:
        write_out(answer)
        return 0
    import io
    import site

    site.main()  # run with -S: the packages are needed only now
    try:
        if path and store != ":memory:":
            start_daemon(store, holdout)
        from lamar_claude_code.hook import run
    except Exception as exc:  # noqa: BLE001 - a hook never fails the prompt
        _note(store, f"the hook could not start: {type(exc).__name__}: {exc}; run lamar claude-code install again")
        if starts_session(raw):
            write_out(cannot_start(store, exc, create).encode("utf-8"))
        return 0
    return run(io.BytesIO(raw), sys.stdout or io.StringIO(), store, exit_on_timeout=True, create=create,
               start=time.monotonic() - (time.time() - arrived), holdout=holdout)


if __name__ == "__main__":
    raise SystemExit(main())
