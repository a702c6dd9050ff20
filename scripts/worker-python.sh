#!/usr/bin/env bash
# Runs a Python command with the training worker importable: the CI virtualenv .venv-worker when it exists
# (.ci/run creates it: pip install ./workers/python[test]), else any python3 that can import torch, transformers
# and peft, with workers/python on the path. Exits 3 when there is none.
set -uo pipefail
# The caller's working directory stays (pytest and the worker resolve their paths from it).
root="$(cd "$(dirname "$0")/.." && pwd)"
# The working tree's package comes first, so an edit is what runs even when the venv holds an older install.
export PYTHONPATH="$root/workers/python${PYTHONPATH:+:$PYTHONPATH}"
if [ -x "$root/.venv-worker/bin/python" ]; then
  exec "$root/.venv-worker/bin/python" "$@"
fi
for py in ${TUNEBOARD_PYTHON:-} python3; do
  if [ -n "$py" ] && "$py" -c 'import torch, transformers, peft, httpx' >/dev/null 2>&1; then
    exec "$py" "$@"
  fi
done
echo "no Python with torch, transformers, peft and httpx: python3 -m venv .venv-worker && .venv-worker/bin/pip install ./workers/python[test]" >&2
exit 3
