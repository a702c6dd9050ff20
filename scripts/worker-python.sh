#!/usr/bin/env bash
# Runs a Python command with the training worker importable: the CI virtualenv .venv-worker when it exists
# (.ci/run creates it: pip install ./workers/python[test]), else any python3 that can import torch, transformers
# and peft, with workers/python on the path. Exits 3 when there is none.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -x .venv-worker/bin/python ]; then
  exec .venv-worker/bin/python "$@"
fi
for py in ${TUNEBOARD_PYTHON:-} python3; do
  if [ -n "$py" ] && "$py" -c 'import torch, transformers, peft, httpx' >/dev/null 2>&1; then
    PYTHONPATH="$PWD/workers/python${PYTHONPATH:+:$PYTHONPATH}" exec "$py" "$@"
  fi
done
echo "no Python with torch, transformers, peft and httpx: python3 -m venv .venv-worker && .venv-worker/bin/pip install ./workers/python[test]" >&2
exit 3
