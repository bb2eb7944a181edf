"""lamar/gym/sweep.py: the arguments the research sweeps of tools/ share, refused before any run."""

from __future__ import annotations

import pytest

from tests.tools import load_tool

SWEEPS = ("detector_sweep", "changepoint_sweep", "glr_sweep")


_SHARED = [
    (["0"], "worlds is the number of worlds to draw, from 1 to 100_000"), (["-1"], "; got -1"),
    (["1000000000"], "(the reported worlds stop where the tuning worlds start); got 1_000_000_000"),
    (["2", "--workers", "0"], "--workers must be at least 1; got 0"),
    (["2", "--workers", "100000"], ("--workers is from 1 to 8 on this machine (4 per CPU: the runs are CPU-bound, "
                                    "so more processes only share the same CPUs); got 100_000")),
    (["2", "--gym-seeds", "0"], "--gym-seeds is from 1 to 100_000; got 0"),
    (["2", "--gym-seeds", "1000000"], "--gym-seeds is from 1 to 100_000; got 1_000_000"),
    (["2", "--gym-first-seed", "-1"], "--gym-first-seed is a seed, at least 0; got -1"),
]
_REACH = [  # tools/reach_sweep.py has a parser of its own, with the same bounds
    (["--worlds", "0"], "--worlds is the number of worlds to draw, from 1 to 100_000"),
    (["--workers", "100000"], "--workers is from 1 to 8 on this machine"),
    (["--workers", "0"], "--workers must be at least 1; got 0"),
    (["--gym-first-seed", "-1"], "--gym-first-seed is a seed, at least 0; got -1"),
]


@pytest.mark.parametrize(("tool", "argv", "message"),
                         [(tool, argv, message) for tool in SWEEPS for argv, message in _SHARED]
                         + [("reach_sweep", argv, message) for argv, message in _REACH])
def test_a_sweep_refuses_its_counts_before_it_runs(tool: str, argv: list[str], message: str,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # 0 worlds ran the gym for minutes and printed a table of dashes; --workers 0 and --gym-seeds 0
    # raised a traceback once the family had run; any --workers count was forked.
    module = load_tool(tool)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(module, "sweep", lambda *a, **k: pytest.fail("the sweep ran"))
    with pytest.raises(SystemExit) as exit_info:
        module.main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(("tool", "argv"), [
    ("detector_sweep", []), ("detector_sweep", ["100000", "--workers", "8", "--gym-seeds", "1"]),
    ("changepoint_sweep", ["1", "--workers", "1", "--gym-first-seed", "0"]), ("reach_sweep", []),
    ("glr_sweep", ["1", "--workers", "1", "--settings", "10,c13.5"]),
])
def test_the_defaults_and_the_bounds_themselves_are_taken(tool: str, argv: list[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    module = load_tool(tool)
    ran: list[int] = []
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(module, "sweep", lambda *a, **k: ran.append(1) or [])
    module.main(argv)
    assert ran == [1]


def test_a_sweep_against_the_peer_runs_each_setting_under_its_patch() -> None:
    import contextlib

    from lamar.gym import sweep as sweep_frame
    from lamar.policy import change

    seen: list[float] = []

    @contextlib.contextmanager
    def patch() -> object:
        saved = change.LEVEL
        change.LEVEL = 99.0
        try:
            yield
        finally:
            change.LEVEL = saved

    def spy(rows: list[object], name: str, *args: object, **kwargs: object) -> object:
        seen.append(change.LEVEL)
        return real(rows, name, *args, **kwargs)

    real, sweep_frame.run_setting = sweep_frame.run_setting, spy  # type: ignore[assignment]
    try:
        lines = sweep_frame.against_peer("A test", "level", 10, [("default", contextlib.nullcontext), ("99", patch)],
                                         ["   level: a note"], worlds=1, tuning=True, gym_first_seed=100,
                                         gym_seeds=1, workers=1)
    finally:
        sweep_frame.run_setting = real  # type: ignore[assignment]
    assert seen == [change.LEVEL, 99.0]  # each setting ran under its own patch, which was then undone
    assert lines[0] == "A test on the family (1 tuning worlds, seeds 100000-100000) and the gym (seeds 100-100)"
    assert [line.split()[0] for line in lines[2:6]] == ["default", "99", sweep_frame.PEER, "river-e.1f"]
    assert len(lines[3].split()) == len(lines[2].split()) + 1  # only the second has a difference to the default
    assert lines[6:8] == ["   level: a note", ("   minus river-ts: paired by world, with the lower end of its 95% "
                                                "interval (goal 1 asks it above -0.01);")]
