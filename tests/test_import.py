"""`import lamar` stays cheap: a hook or a CLI starts a fresh interpreter on every call.

A behaviour test, not a timing: a fresh interpreter that imports lamar has not loaded asyncio,
the sleep machinery, the safety rules, the model adapters or the gym (the cold benchmark,
`python -m lamar.bench --cold`, prints what that saves).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lamar import Experience, Lamar

HEAVY = ("asyncio", "lamar.sleep", "lamar.models", "lamar.safety", "lamar.gym", "lamar.cli", "lamar.bench")
# A recall scrubs its context behind a pre-filter (docs/guarantees.md, "A recall's context"): a plain label loads
# the needle table and the few patterns it searches, never the rules.
PREFILTER = {"lamar.safety", "lamar.safety.context_values", "lamar.safety.prefilter", "lamar.safety.needle_table",
             "lamar.safety.needles", "lamar.safety.entropy", "lamar.safety.disguised", "lamar.safety.escapes"}


def _modules_after(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, env={**os.environ}, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_import_lamar_loads_none_of_the_optional_machinery() -> None:
    modules = _modules_after("import lamar")
    assert sorted(m for m in modules if m.startswith("lamar")) == ["lamar"]  # each name loads when named
    assert "lamar.store" in _modules_after("from lamar import ExperienceStore")
    assert _heavy(modules) == []
    named = _modules_after("from lamar import Lamar")
    assert "lamar.engine" in named and _heavy(named) == []


def test_a_hook_episode_loads_none_of_it_either(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    setup = Lamar(store, seed=1)  # adding a lesson screens its text: the safety rules load then
    setup.add(Experience("a build fails", "clear the cache"))
    setup.close()
    code = ("import lamar\n"
            f"lam = lamar.Lamar({store!r}, seed=1)\n"
            "rec = lam.recall({'task': 'x'})\n"
            "assert rec.experiences or rec.held_out\n"
            "lam.report(rec.episode_id, lamar.Signal.SHIPPED)\n"
            "lam.close()")
    assert [m for m in _heavy(_modules_after(code)) if m not in PREFILTER] == []


def test_the_lazy_names_still_import_and_load_their_module() -> None:
    modules = _modules_after("from lamar import SleepReport, Trace, Proposal, ApplyResult\n"
                             "import lamar; assert lamar.SleepReport is SleepReport")
    assert {"lamar.sleep.proposals", "lamar.sleep.traces"} <= modules


def test_dir_lists_the_names_loaded_on_first_use() -> None:
    modules = _modules_after("import lamar\nnames = dir(lamar)\n"
                             "assert {'Lamar', 'Signal', 'SleepReport', 'LamarError'} <= set(names), names")
    assert "lamar.engine" not in modules  # listing a name does not load it


def test_as_prompt_loads_the_safety_rules_on_first_use() -> None:
    """What a hook shows the model is screened, so rendering it is where the rules load."""
    code = ("import lamar\n"
            "lam = lamar.Lamar(':memory:', seed=1)\n"
            "lam.add(lamar.Experience('System: a build fails', 'clear the cache'))\n"
            "print(lam.recall({}).as_prompt())")
    assert {"lamar.safety.fence", "lamar.safety.secrets"} <= _modules_after(code)


def test_a_cli_command_that_never_scrubs_compiles_no_safety_patterns(tmp_path: Path) -> None:
    """Every CLI line goes out through `lamar.safety.terminal`; the package loads no other rule with it."""
    store = str(tmp_path / "s.db")
    Lamar(store, seed=1).close()
    code = ("import sys\nfrom lamar.cli import main\n"
            f"sys.argv = ['lamar', 'stats', '--store', {store!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass")
    modules = _modules_after(code)
    assert "lamar.safety.terminal" in modules
    assert not {"lamar.safety.secrets", "lamar.safety.injection", "lamar.safety.fence"} & modules


def test_the_public_names_are_frozen() -> None:
    # A name added to or dropped from lamar's surface is a decision: change this list with it.
    import lamar

    assert lamar.__all__ == [
        "ApplyResult", "CorruptStore", "DuplicateReport", "EventConflict", "Evidence", "Experience",
        "ExperienceStore", "InvalidArgument", "InvalidContext", "InvalidEvent", "InvalidExperience",
        "InvalidReport", "InvalidReward", "InvalidTrace", "Lamar", "LamarError", "ModelError", "Policy",
        "Preview", "Proposal", "Recall", "Scope", "Signal", "SleepReport", "StaleProposal", "Status", "StoreError",
        "Trace", "UnknownEpisode", "UnknownExperience", "UnknownProposal", "Verdict",
    ]
    assert all(getattr(lamar, name) is not None for name in lamar.__all__)
