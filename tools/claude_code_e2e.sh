#!/bin/sh
# Lamar's Claude Code hooks as a new user meets them on a fresh machine, twice: installed with
# `lamar claude-code install`, then through the plugin with no store created beforehand.
#
#     sh tools/claude_code_e2e.sh PYTHON     # the interpreter where Lamar is installed
#
# Every hook runs under `env -i` with PATH=/usr/bin:/bin and a fresh HOME, as Claude Code started
# from a desktop runs it. The session: SessionStart, three prompts each with an edit, a commit, a
# revert, SessionEnd. Every hook must exit 0, and the store must hold three episodes with the
# outcomes git and the session imply (shipped, reverted, accepted). Exit 0 when all holds.
set -eu

PY=${1:?usage: sh tools/claude_code_e2e.sh PYTHON}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lamar-e2e.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0

git_in() { env -i HOME="$WORK" PATH=/usr/bin:/bin git -C "$REPO" -c user.name=Dev -c user.email=dev@example.com "$@"; }

new_repo() {  # a fresh repository named shop with one commit
    REPO=$1/shop
    mkdir -p "$REPO"
    git_in init -q -b main
    printf 'def main():\n    print("shop")\n' > "$REPO/app.py"
    git_in add app.py
    git_in commit -q -m init
}

event() {  # event NAME SESSION [JSON-FIELDS]: one hook event as Claude Code documents it
    printf '{"session_id": "%s", "transcript_path": "%s/none.jsonl", "cwd": "%s", "permission_mode": "default", "hook_event_name": "%s"%s}' \
        "$2" "$WORK" "$REPO" "$1" "${3:-}"
}

hook() {  # hook NAME [JSON-FIELDS]: run the hook command under a stripped environment, check it exits 0
    set +e
    event "$1" s1 "${2:-}" | env -i HOME="$HOOK_HOME" PATH=/usr/bin:/bin XDG_RUNTIME_DIR="$WORK/run" \
        LAMAR_HOOK_IDLE=30 $HOOK_ENV /bin/sh -c "$HOOK_COMMAND" > "$WORK/out" 2> "$WORK/err"
    status=$?
    set -e
    if [ "$status" -ne 0 ]; then
        echo "FAIL $1 exited $status: $(cat "$WORK/err")"
        FAILED=1
    else
        echo "ok   $1 exit 0$( [ -s "$WORK/out" ] && echo ', lessons injected')"
    fi
}

edit() {  # edit FILE TEXT: Claude's Write tool, then its PostToolUse event
    printf '%s\n' "$2" > "$REPO/$1"
    hook PostToolUse ", \"tool_name\": \"Write\", \"tool_use_id\": \"t-$1\", \"tool_input\": {\"file_path\": \"$REPO/$1\", \"content\": \"$2\"}, \"tool_response\": {\"success\": true}"
}

session() {
    hook SessionStart ', "source": "startup"'
    hook UserPromptSubmit ', "prompt": "add a version file"'
    edit version.py 'VERSION = 1'
    hook Stop ', "stop_hook_active": false'
    git_in add version.py && git_in commit -q -m "version file"                       # prompt 1 ships
    hook UserPromptSubmit ', "prompt": "add a changelog for the release"'
    edit CHANGELOG.md '# Changes'
    hook Stop ', "stop_hook_active": false'
    git_in add CHANGELOG.md && git_in commit -q -m "changelog"
    git_in revert --no-edit HEAD > /dev/null                                            # prompt 2 is reverted
    hook UserPromptSubmit ', "prompt": "rename main to run in app.py"'
    edit app.py 'def run(): pass'
    hook Stop ', "stop_hook_active": false'
    hook SessionEnd ', "reason": "other"'                                               # prompt 3: accepted
}

check() {  # check STORE: three episodes, in order shipped, reverted, accepted
    env -i HOME="$HOOK_HOME" PATH=/usr/bin:/bin "$PY" - "$1" <<'PYTHON' || FAILED=1
import sys

from lamar import Lamar
from lamar.store import open_store

raw = open_store(sys.argv[1])
order = [e.data["id"] for e in raw.read(0) if e.kind == "episode"]  # in the order they were stored
raw.close()
with Lamar(sys.argv[1]) as lam:
    signals = [lam.episode(episode).signal for episode in order]
print(f"store {sys.argv[1]}: {len(order)} episodes, outcomes {signals}")
if signals != ["shipped", "reverted", "accepted"]:
    print("FAIL expected outcomes ['shipped', 'reverted', 'accepted']")
    raise SystemExit(1)
PYTHON
}

echo "== lamar claude-code install (hooks in .claude/settings.local.json)"
mkdir -p "$WORK/run" && chmod 700 "$WORK/run"
new_repo "$WORK/a"
HOOK_HOME="$WORK/a/home"; mkdir -p "$HOOK_HOME"
STORE="$WORK/a/lessons.db"
(cd "$REPO" && env -i HOME="$HOOK_HOME" PATH=/usr/bin:/bin "$PY" -m lamar.cli claude-code install --store "$STORE")
env -i HOME="$HOOK_HOME" PATH=/usr/bin:/bin "$PY" -m lamar.cli add --store "$STORE" --scope project=shop \
    --precondition "a change to the shop" --action "run the tests before committing" > /dev/null
HOOK_COMMAND=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"])' \
    "$REPO/.claude/settings.local.json")
HOOK_ENV=""
echo "hook command: $HOOK_COMMAND"
session
check "$STORE"

echo "== the plugin, no store beforehand"
new_repo "$WORK/b"
HOOK_HOME="$WORK/b/home"; mkdir -p "$HOOK_HOME"
HOOK_COMMAND=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"])' \
    "$ROOT/plugins/lamar/hooks/hooks.json")
HOOK_ENV="CLAUDE_PLUGIN_ROOT=$ROOT/plugins/lamar CLAUDE_PLUGIN_DATA=$WORK/b/data CLAUDE_PLUGIN_OPTION_PYTHON=$PY"
echo "hook command: $HOOK_COMMAND"
session
check "$HOOK_HOME/.local/share/lamar/experience.db"

[ "$FAILED" -eq 0 ] && echo "PASS" || echo "FAIL"
exit "$FAILED"
