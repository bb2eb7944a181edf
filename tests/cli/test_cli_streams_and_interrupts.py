"""`lamar` started with a standard stream closed, or stopped by Ctrl+C while it starts up: one
line and a documented status, never "a bug in Lamar" or a traceback; the store reopens. The
real command runs in a subprocess, on real store files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def _lamar(tmp_path: Path, *args: str, shell: str = 'exec "$@"', pythonpath: Path | None = None,
           env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m lamar.cli ARGS` through `sh -c SHELL`, which can close a stream before it starts."""
    env = {k: v for k, v in os.environ.items() if k != "LAMAR_STORE"}
    env.update(HOME=str(tmp_path), **(env_extra or {}))
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run(["sh", "-c", shell, "sh", sys.executable, "-m", "lamar.cli", *args],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60, check=False)


def test_a_closed_stdin_reads_as_empty(tmp_path: Path, json_store: Path) -> None:
    empty = _lamar(tmp_path, "--store", str(json_store), "add", "--from", "-", shell='exec "$@" <&-')
    assert (empty.returncode, empty.stderr.count("\n")) == (1, 1), empty.stderr
    assert "holds no lesson" in empty.stderr

    report = tmp_path / "report.json"
    assert _lamar(tmp_path, "--store", str(json_store), "sleep", "--out", str(report)).returncode == 0
    review = _lamar(tmp_path, "--store", str(json_store), "review", str(report), shell='exec "$@" <&-')
    assert review.returncode == 0, review.stderr
    assert "undecided" in review.stdout


@pytest.mark.parametrize("closed", ['exec "$@" >&-', 'exec "$@" 2>&-'])
def test_a_closed_stdout_or_stderr_writes_into_nothing(tmp_path: Path, store: Path, closed: str) -> None:
    for command in (["ls"], ["stats", "--json"], ["show", "exp_nope"]):
        done = _lamar(tmp_path, "--store", str(store), *command, shell=closed)
        assert done.returncode == (1 if command[0] == "show" else 0), (command, done.stderr)
        assert "bug in Lamar" not in done.stderr and "Traceback" not in done.stderr
    assert json.loads(_lamar(tmp_path, "--store", str(store), "stats", "--json").stdout)["experiences"] > 0


def test_ctrl_c_while_the_parser_is_built_is_one_line(tmp_path: Path, store: Path) -> None:
    # Ctrl+C lands wherever the program is: here, deterministically, while the parser module loads.
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'lamar.cli.parser':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n", encoding="utf-8")
    done = _lamar(tmp_path, "--store", str(store), "stats", pythonpath=hook)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "lamar: error: interrupted\n")
    assert _lamar(tmp_path, "--store", str(store), "stats").returncode == 0


@pytest.mark.parametrize("module", ["lamar._errors", "lamar.experience", "lamar.cli.session", "lamar.engine"])
def test_ctrl_c_while_the_first_modules_load_is_one_line(tmp_path: Path, store: Path, module: str) -> None:
    # The console script `lamar` imports `main` before calling it: a Ctrl+C while `lamar` and `lamar.cli` loaded
    # their modules (the first tenth of a second) was a Python traceback.
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}:\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n", encoding="utf-8")
    script = tmp_path / "lamar"  # what pip writes for [project.scripts] lamar = "lamar.cli:main"
    script.write_text("import re\nimport sys\nfrom lamar.cli import main\nif __name__ == '__main__':\n"
                      "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                      "    sys.exit(main())\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "LAMAR_STORE"}
    env.update(HOME=str(tmp_path), PYTHONPATH=os.pathsep.join([str(hook), *filter(None, [env.get("PYTHONPATH")])]))
    done = subprocess.run([sys.executable, str(script), "--store", str(store), "stats"], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "lamar: error: interrupted\n")


_AFTER_STATEMENT = """\
import os, sqlite3
class Interrupting(sqlite3.Connection):
    seen = 0
    def execute(self, sql, *args):
        cursor = super().execute(sql, *args)
        if sql == os.environ['INTERRUPT_AFTER']:
            Interrupting.seen += 1
            if Interrupting.seen == int(os.environ['INTERRUPT_AT']):
                raise KeyboardInterrupt
        return cursor
connect = sqlite3.connect
sqlite3.connect = lambda *a, **k: connect(*a, **{'factory': Interrupting, **k})
"""


@pytest.mark.parametrize("statement", ["BEGIN", "BEGIN IMMEDIATE"])
def test_ctrl_c_inside_a_sqlite_transaction_is_not_called_a_corrupt_store(
        tmp_path: Path, sqlite_store: Path, statement: str) -> None:
    # The Ctrl+C lands just after a read's or a write's BEGIN ran, before the code that ends it.
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_AFTER_STATEMENT, encoding="utf-8")
    lessons = tmp_path / "lessons.md"
    lessons.write_text("".join(f"- When case {i}, do step {i}\n" for i in range(20)), encoding="utf-8")

    def stored() -> int:
        after = _lamar(tmp_path, "--store", str(sqlite_store), "stats", "--json")
        assert after.returncode == 0, after.stderr
        count: int = json.loads(after.stdout)["experiences"]
        return count

    before = stored()
    done = _lamar(tmp_path, "--store", str(sqlite_store), "add", "--from", str(lessons), pythonpath=hook,
                  env_extra={"INTERRUPT_AFTER": statement, "INTERRUPT_AT": "16"})
    said = re.fullmatch(rf"lamar: error: interrupted after adding (\d+) of the 20 new lessons of "
                        rf"{re.escape(str(lessons))}: run the same command again to add the rest "
                        r"\(the lessons already added are skipped\)\n", done.stderr)
    assert done.returncode == 130 and said, done.stderr
    added = int(said.group(1))
    # The completed adds, whole, and as many as it says; one more when the Ctrl+C came after an
    # add was stored, while it checked that no other process had stored the same lesson.
    kept = stored() - before
    assert 0 < added < 20 and added <= kept <= added + 1, (added, kept)
    # What the message promises: the same command adds the rest and only the rest.
    again = _lamar(tmp_path, "--store", str(sqlite_store), "add", "--from", str(lessons))
    assert again.returncode == 0, again.stderr
    assert f"added {20 - kept} lessons from {lessons} ({kept} " in again.stdout
    assert stored() == before + 20


_AFTER_PG_STATEMENT = """\
import os, psycopg
class Interrupting:
    seen = 0
execute = psycopg.Cursor.execute
def interrupting(self, query, *args, **kwargs):
    result = execute(self, query, *args, **kwargs)
    if str(query).lstrip().startswith(os.environ['INTERRUPT_AFTER']):
        Interrupting.seen += 1
        if Interrupting.seen == int(os.environ['INTERRUPT_AT']):
            raise KeyboardInterrupt
    return result
psycopg.Cursor.execute = interrupting
"""


def _idle_in_transaction(url: str, application: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                           "AND state LIKE 'idle in transaction%%'", (application,)).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.parametrize(("command", "statement"),
                         [("retire", "BEGIN;"), ("add", "BEGIN;\nSELECT pg_advisory_xact_lock")])
def test_ctrl_c_inside_a_postgres_transaction_is_interrupted_not_unreadable(
        tmp_path: Path, postgres_url: str, command: str, statement: str) -> None:
    # Not a defect in the PostgreSQL store, unlike SQLite's: the Ctrl+C lands just after a write's BEGIN
    # (retire: its transaction is open, its rows locked) or an add's read (it holds the add lock), and the
    # pooled connection is handed back rolled back, so the close that follows works, the command ends as
    # interrupted and the next add does not wait for a lock left behind.
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace("interrupt")
    url = namespace_url(postgres_url, namespace)
    try:
        added = _lamar(tmp_path, "--store", url, "add", "--create", "-q", "--precondition", "a build fails",
                       "--action", "retry")
        assert added.returncode == 0, added.stderr
        exp_id = added.stdout.split()[0]
        hook = tmp_path / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(_AFTER_PG_STATEMENT, encoding="utf-8")
        lessons = tmp_path / "lessons.md"
        lessons.write_text("".join(f"- When case {i}, do step {i}\n" for i in range(20)), encoding="utf-8")
        args = ("retire", exp_id, "--reason", "masks real failures") if command == "retire" else (
            "add", "--from", str(lessons))
        done = _lamar(tmp_path, "--store", url, *args, pythonpath=hook,
                      env_extra={"INTERRUPT_AFTER": statement, "INTERRUPT_AT": "3" if command == "add" else "1"})
        assert done.returncode == 130 and done.stderr.startswith("lamar: error: interrupted"), done.stderr
        after = _lamar(tmp_path, "--store", url, "ls", "--json")
        assert after.returncode == 0, after.stderr
        statuses = {lesson["id"]: lesson["status"] for lesson in json.loads(after.stdout)}
        assert statuses[exp_id] == "active" and 1 <= len(statuses) < 21  # nothing half-written
        assert _lamar(tmp_path, "--store", url, *args).returncode == 0  # no lock left behind
    finally:
        drop_namespaces(postgres_url, namespace)


def test_the_next_call_after_a_ctrl_c_inside_a_postgres_transaction_works(postgres_url: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # In one process (a notebook, a server): the connection the interrupted write held goes back to
    # the pool rolled back, never idle in a transaction, and the same store writes and closes.
    psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    import uuid

    from lamar import Experience, Lamar
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace, application = unique_namespace("interrupt"), f"lamar-interrupt-{uuid.uuid4().hex[:12]}"
    lam = Lamar(namespace_url(postgres_url, namespace, application_name=application), seed=1)
    try:
        exp_id = lam.add(Experience("a build fails", "retry"))
        execute = psycopg.Cursor.execute

        def interrupting(self, query, *args, **kwargs):  # type: ignore[no-untyped-def]
            result = execute(self, query, *args, **kwargs)
            if str(query).startswith("BEGIN;"):
                raise KeyboardInterrupt
            return result

        monkeypatch.setattr(psycopg.Cursor, "execute", interrupting)
        with pytest.raises(KeyboardInterrupt):
            lam.retire(exp_id, "masks real failures")
        monkeypatch.undo()
        assert _idle_in_transaction(postgres_url, application) == 0
        assert lam.get(exp_id).status.value == "active"
        lam.retire(exp_id, "masks real failures")
        assert lam.get(exp_id).status.value == "retired"
    finally:
        lam.close()
        drop_namespaces(postgres_url, namespace)
