"""What `-` means for each command's output flag (stdout for a document, a refusal for a file
that must stay a file), and `--force` doing what the refusal it answers says."""

from __future__ import annotations

import json

from lamar import Lamar
from lamar.store import Event, open_store
from lamar.store.files import file_kind
from tests.killed import event_count


def test_sleep_out_dash_writes_the_report_to_stdout_and_nothing_else(lamar_cli, run_cli, store, tmp_path):
    out = lamar_cli("sleep", "--store", store, "--out", "-")
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "-").exists() and out.stderr == ""
    report = json.loads(out.stdout)
    saved = tmp_path / "saved.json"
    assert run_cli("sleep", "--store", store, "--out", saved).returncode == 0
    file = json.loads(saved.read_text(encoding="utf-8"))
    assert report["format"] == "lamar-sleep-report" and report["proposals"]
    assert [p["id"] for p in report["proposals"]] == [p["id"] for p in file["proposals"]]
    # What a shell redirect saves is a report that review and apply take as `--out FILE` saves it.
    piped = tmp_path / "piped.json"
    piped.write_text(out.stdout, encoding="utf-8")
    assert run_cli("review", piped, stdin="n\nn\n").returncode == 0
    assert sorted(json.loads(piped.read_text(encoding="utf-8"))["rejected"]) == sorted(
        p["id"] for p in report["proposals"])
    with_json = lamar_cli("sleep", "--store", store, "--out", "-", "--json")  # the report once, not twice
    assert with_json.returncode == 0 and json.loads(with_json.stdout)["format"] == "lamar-sleep-report"
    named = run_cli("sleep", "--store", store, "--out", "./-")  # a file called "-", spelt as a path
    # The piped report named its store, so review remembered both noes there: this night leaves them out.
    again = json.loads((tmp_path / "-").read_text(encoding="utf-8"))
    assert named.returncode == 0 and again["format"] == "lamar-sleep-report" and again["proposals"] == []
    assert sorted(again["summary"]["rejected"]) == sorted(p["id"] for p in report["proposals"])


def test_export_out_dash_is_refused_saying_a_store_is_a_file(run_cli, json_store, tmp_path):
    before = sorted(p.name for p in tmp_path.iterdir())
    out = run_cli("export", "--store", json_store, "--out", "-")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == ("lamar: error: --out -: export writes a store, which stdout cannot hold: name a "
                          ".json or .db file, or a postgresql:// URL (./- for a file called -)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_export_rules_to_dash_is_refused_saying_the_rules_file_is_edited_in_place(run_cli, json_store, tmp_path):
    before = sorted(p.name for p in tmp_path.iterdir())
    out = run_cli("export-rules", "--store", json_store, "--to", "-")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == ("lamar: error: --to -: export-rules rewrites one marked section of a rules file and "
                          "keeps the rest, so it needs the file: name it (e.g. --to CLAUDE.md; ./- for a file "
                          "called -)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_ui_report_dash_is_refused_before_the_app_starts(lamar_cli, json_store, tmp_path):
    out = lamar_cli("ui", "--store", json_store, "--no-browser", "--report", "-")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == ("lamar: error: --report -: the app reads the sleep report and saves your decisions "
                          "into it, so it needs a file: name one (./- for a file called -), or leave --report out "
                          "for the one beside the store\n")
    assert not (tmp_path / "-").exists()


def test_export_force_replaces_a_file_lamar_did_not_write_as_the_refusal_says(run_cli, json_store, tmp_path):
    notes = tmp_path / "notes.json"
    notes.write_text('{"a": 1}\n')
    refused = run_cli("export", "--store", json_store, "--out", notes)
    assert refused.returncode == 1 and "or pass --force to overwrite it" in refused.stderr
    assert notes.read_text() == '{"a": 1}\n'
    before = sorted(p.name for p in tmp_path.iterdir())
    done = run_cli("export", "--store", json_store, "--out", notes, "--force")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"copied {event_count(json_store)} events from {json_store} to {notes} (verified)\n"
    assert file_kind(notes) == "json"
    with Lamar(str(json_store)) as source, Lamar(str(notes)) as copy:
        assert [e.id for e in copy.experiences()] == [e.id for e in source.experiences()]
    # Nothing of the old file, nor of the copy's making, is left beside it but the store's own files (its
    # index, the state the copy saved for its first readers, and its writers' lock, held for the rename).
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*before, "notes.json.index", "notes.json.state",
                                                                 "notes.json.lock"])


def test_export_force_leaves_the_file_as_it_was_when_the_copy_fails(run_cli, tmp_path):
    source = tmp_path / "hostile.db"
    raw = open_store(str(source))
    raw.append([Event("status", {"id": "x", "status": "zombie"})])  # no API call writes this: refused
    raw.close()
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"my notes")
    before = sorted(p.name for p in tmp_path.iterdir())
    done = run_cli("export", "--store", source, "--out", notes, "--force")
    assert done.returncode in (1, 2) and "zombie" in done.stderr, done.stderr
    assert notes.read_bytes() == b"my notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_target_no_backend_takes_is_refused_as_such_not_with_force_advice(run_cli, json_store, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    for extra in ((), ("--force",)):
        out = run_cli("export", "--store", json_store, "--out", notes, *extra)
        assert out.returncode == 2 and "cannot tell the backend" in out.stderr and "--force" not in out.stderr
        assert notes.read_text() == "my notes"
