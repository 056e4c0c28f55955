#!/usr/bin/env bash
# The demo: a scratch git repository, `ynm init`, the example team store imported, then the
# questions of examples/questions.txt recalled and the newest memories listed.
# Uses its own YNM_HOME so your personal store (~/.ynm) is never touched.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
ynm="$root/.venv/bin/ynm"
demo="$root/.demo"
rm -rf "$demo"
mkdir -p "$demo/repo"
export YNM_HOME="$demo/home"
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com
export GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.com
cd "$demo/repo"

run() { printf '\n$ %s\n' "$*"; "$@"; }

git init -q -b main
echo "# ledger" > README.md
git add README.md && git commit -q -m "initial commit"

run "$ynm" init
run "$ynm" import "$root/examples/team-store.jsonl"
while IFS= read -r question; do
  [ -n "$question" ] || continue
  run "$ynm" recall "$question" --limit 3
done < "$root/examples/questions.txt"
run "$ynm" recall --type procedural --namespace team --limit 5
run "$ynm" list --limit 12
run "$ynm" status
printf '\nThe scratch repository is %s; its memory lives in git notes:\n' "$demo/repo"
git for-each-ref --count=5 --format='  %(refname)' refs/notes/ynm
