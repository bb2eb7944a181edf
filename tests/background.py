"""Checks that run one subprocess and need nothing from the other tests: started when collection
ends (tests/conftest.py) if their test was selected, they run one at a time beside the tests
before theirs, and their test waits for a result that is usually there by then."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

Test = TypeVar("Test", bound=Callable[..., Any])
_STARTED: list[Background] = []
# One check at a time: the tests beside them keep the rest of the machine.
_LANE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="background-check")


class Background:
    """`args` run in `cwd` with `env`; "{folder}" in an argument names a fresh folder of its own."""

    def __init__(self, args: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.args, self.cwd, self.env = args, cwd, env
        self.folder: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._future: Future[int] | None = None

    def start(self) -> None:
        if self._future is None:
            self._future = _LANE.submit(self._run)
            _STARTED.append(self)

    def _run(self) -> int:
        self.folder = Path(tempfile.mkdtemp(prefix="lamar-background-"))
        # Files, not pipes: nobody reads until the test runs, and a full pipe would stall the check.
        with open(self.folder / "stdout", "wb") as out, open(self.folder / "stderr", "wb") as err:
            self._proc = subprocess.Popen([a.replace("{folder}", str(self.folder)) for a in self.args],
                                          cwd=self.cwd, env=self.env, stdout=out, stderr=err)
        return self._proc.wait()

    def result(self, timeout: float) -> subprocess.CompletedProcess[str]:
        """Its outcome, started now if it was not (a test run on its own, or collected another way)."""
        self.start()
        assert self._future is not None
        try:
            returncode = self._future.result(timeout=timeout)
        except TimeoutError:
            self.stop()
            raise
        assert self._proc is not None and self.folder is not None
        out, err = ((self.folder / name).read_text(errors="replace") for name in ("stdout", "stderr"))
        return subprocess.CompletedProcess(self._proc.args, returncode, out, err)

    def stop(self) -> None:
        """End it if its test never waited for it, and remove its folder."""
        if self._future is not None and not self._future.cancel():
            while self._proc is None and not self._future.done():  # between its start and its Popen
                time.sleep(0.01)
            if self._proc is not None and self._proc.poll() is None:
                self._proc.kill()
            self._future.exception()  # waits until its thread has seen the process end
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def starts(check: Background) -> Callable[[Test], Test]:
    """Mark a test as the one that waits for `check`, so that selecting it starts `check` early."""
    def mark(test: Test) -> Test:
        test.background = check  # type: ignore[attr-defined]
        return test
    return mark


def start_selected(tests: Iterable[Any]) -> None:
    """Start the checks that the selected tests (pytest items) wait for."""
    for test in tests:
        check = getattr(getattr(test, "function", None), "background", None)
        if isinstance(check, Background):
            check.start()


def stop_all() -> None:
    while _STARTED:
        _STARTED.pop().stop()
