#!/usr/bin/env bash
# What a new user meets, on this machine as if it were fresh: a clone, the README's install and
# first command exactly as the README writes them, then a release built and installed like one.
#
#   bash tools/fresh_machine.sh [REPOSITORY]     (default: the repository holding this script)
#
# Needs python3 (3.11 or newer), git and the network (PyPI). Works in a temporary folder, removed
# at the end (kept with KEEP=1), and never touches the repository it clones: only committed work
# is tried. CI runs it after the tests (.ci/run).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
source_repo="${1:-$here}"
# git+ needs a URL; the bundled pip of Python 3.11 (23.2) refuses file:/// but takes file://localhost/
case "$source_repo" in /*) url="file://localhost$source_repo" ;; *) url="$source_repo" ;; esac
work="$(mktemp -d "${TMPDIR:-/tmp}/lamar-fresh.XXXXXX")"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
python3 -c 'import sys; assert sys.version_info >= (3, 11), "Lamar needs Python 3.11 or newer"'

step() { printf '\n== %s\n' "$*"; }

# The README's own commands, read from the page so that the page is what gets tried: the
# console lines of its Install section ($ ...) and the first bash block of "Two commands".
readme_commands() {
    python3 - "$here/README.md" "$1" "$2" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
heading, which = sys.argv[2], int(sys.argv[3])
section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
blocks = re.findall(r"```(console|bash)\n(.*?)```", section, re.S)
lang, code = blocks[which]
lines = [line[2:] for line in code.splitlines() if line.startswith("$ ")] if lang == "console" else \
    [line for line in code.splitlines() if line.strip() and not line.startswith("#")]
print("\n".join(lines))
EOF
}

run_as_written() {  # each command echoed, run in one shell (cd and activate carry over)
    local script
    script="$(readme_commands "$1" "$2" | sed "s|<repository URL>|$url|g")"
    [ -n "$script" ] || { echo "README.md: no commands found in '$1'" >&2; exit 1; }
    printf '%s\n' "$script" | sed 's/^/$ /'
    (cd "$3" && env -u VIRTUAL_ENV -u PYTHONPATH bash -euo pipefail -c "$script")
}

step "README, Install: clone, virtual environment, the core and an extra"
mkdir -p "$work/install"
run_as_written "Install" 0 "$work/install"
"$work/install/lamar/.venv/bin/python" -c 'import lamar, lamar_langchain; print("imported", lamar.__version__)'

step "README, Install: the same with git, without a clone"
python3 -m venv "$work/git-venv"
(. "$work/git-venv/bin/activate" && run_as_written "Install" 1 "$work")
"$work/git-venv/bin/python" -c 'import lamar, lamar_langchain; print("imported", lamar.__version__)'

step "README, Two commands: the first one, in a new clone with its own virtual environment"
git clone -q "$url" "$work/two"
python3 -m venv "$work/two/.venv"
(. "$work/two/.venv/bin/activate" && run_as_written "Two commands" 0 "$work/two")

step "A release: sdist, then a wheel built from that sdist"
release="$work/release"
python3 -m venv "$release/build-venv"
"$release/build-venv/bin/python" -m pip install --quiet build
"$release/build-venv/bin/python" -m build --outdir "$release/dist" "$work/two" >/dev/null
ls -l "$release/dist"
wheel="$(ls "$release/dist"/lamar-*.whl)"
(cd "$work/two" && python3 tools/wheel_contents.py "$wheel")

step "The wheel in a fresh environment, run from outside any clone"
python3 -m venv "$release/venv"
"$release/venv/bin/python" -m pip install --quiet "$wheel"
cd "$release"
lamar="$release/venv/bin/lamar"
want_version="$(sed -n 's/^__version__ = "\(.*\)"/\1/p' "$work/two/lamar/__init__.py")"
[ "$("$lamar" --version)" = "lamar $want_version" ] || { echo "lamar --version: want lamar $want_version" >&2; exit 1; }
"$lamar" --version
"$release/venv/bin/python" -c 'import lamar, sys; assert "/site-packages/" in lamar.__file__, lamar.__file__'
"$lamar" mcp --help >/dev/null && echo "lamar mcp --help: ok"
"$lamar" claude-code --help >/dev/null && echo "lamar claude-code --help: ok"
"$release/venv/bin/python" "$work/two/examples/quickstart.py" > quickstart.out
# The README shows the quickstart's output; the installed wheel must print exactly that.
python3 - "$work/two/README.md" quickstart.out <<'EOF'
import re, sys
readme = open(sys.argv[1], encoding="utf-8").read()
section = readme.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
shown = re.search(r"<!-- output -->\n```text\n(.*?)```", section, re.S).group(1)
got = open(sys.argv[2], encoding="utf-8").read()
if [l.rstrip() for l in got.splitlines()] != [l.rstrip() for l in shown.splitlines()]:
    sys.exit(f"the quickstart from the wheel printed\n{got}\nbut the README shows\n{shown}")
print("the quickstart from the wheel prints what the README shows")
EOF
"$lamar" add --create --store "$release/lessons.db" --precondition "the build fails" --action "clear the cache" -q
"$lamar" ls --store "$release/lessons.db"

step "fresh machine: everything above worked"
