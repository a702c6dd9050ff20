"""`tuneboard-worker`: every option is a flag and (where it has one) an environment variable; flags win."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tuneboard-worker",
        description="Trains Tuneboard jobs on Hugging Face models (LoRA SFT and RL) with PyTorch + PEFT.",
    )
    e = os.environ.get
    p.add_argument("--server-url", default=e("TUNEBOARD_SERVER_URL", "http://127.0.0.1:3000"), help="Tuneboard server (env TUNEBOARD_SERVER_URL)")
    p.add_argument("--token", default=e("TUNEBOARD_WORKER_TOKEN"), help="the server's TUNEBOARD_WORKER_TOKEN (env TUNEBOARD_WORKER_TOKEN; required)")
    p.add_argument("--worker-id", default=e("TUNEBOARD_WORKER_ID"), help="stable id shown on the dashboard (env TUNEBOARD_WORKER_ID; default <hostname>:<pid>)")
    p.add_argument("--device", default=e("TUNEBOARD_WORKER_DEVICE", "auto"), help="auto (cuda:0 if present, else cpu), cpu, cuda, cuda:N (env TUNEBOARD_WORKER_DEVICE)")
    p.add_argument(
        "--gpus",
        default=e("TUNEBOARD_WORKER_GPUS", "auto"),
        help="auto: one worker process per visible GPU; 'none'; or a list like 0,1,3 (env TUNEBOARD_WORKER_GPUS)",
    )
    p.add_argument("--dtype", default=e("TUNEBOARD_WORKER_DTYPE", "auto"), choices=["auto", "float32", "bfloat16", "float16"], help="weights dtype: auto = bf16 on CUDA, fp32 on CPU")
    p.add_argument("--models-dir", default=e("TUNEBOARD_BASE_MODELS_DIR", "."), help="where relative 'path's of the base-models file resolve (env TUNEBOARD_BASE_MODELS_DIR; default the working directory)")
    p.add_argument("--hf-cache", default=e("TUNEBOARD_HF_CACHE"), help="Hugging Face cache directory for base models without a path (default HF_HOME's); HF_HUB_OFFLINE=1 is honoured")
    p.add_argument("--base-models", default=e("TUNEBOARD_WORKER_BASE_MODELS"), help="comma-separated base model ids this worker trains (default: every hf base model)")
    p.add_argument("--kinds", default=e("TUNEBOARD_WORKER_KINDS", "rl,sft,tinker"), help="what to run: rl,sft jobs and tinker training clients (env TUNEBOARD_WORKER_KINDS)")
    p.add_argument("--model-ids", default=e("TUNEBOARD_WORKER_MODEL_IDS"), help="only jobs of these model ids (a team's own machine)")
    p.add_argument(
        "--max-training-clients",
        type=int,
        default=int(e("TUNEBOARD_WORKER_MAX_TRAINING_CLIENTS", "8")),
        help="most Tinker training clients held at once, memory permitting (env TUNEBOARD_WORKER_MAX_TRAINING_CLIENTS)",
    )
    p.add_argument("--micro-batch-tokens", type=int, default=int(e("TUNEBOARD_WORKER_MICRO_BATCH_TOKENS", "4096")), help="padded tokens per forward pass; a batch is accumulated over as many passes as it needs")
    p.add_argument("--max-seq-len", type=int, default=int(e("TUNEBOARD_WORKER_MAX_SEQ_LEN", "0")) or None, help="truncate conversations to this many tokens (default: the model's context)")
    p.add_argument("--gradient-checkpointing", default=e("TUNEBOARD_WORKER_GRADIENT_CHECKPOINTING", "auto"), choices=["auto", "on", "off"], help="auto: on for CUDA")
    p.add_argument("--threads", type=int, default=int(e("TUNEBOARD_WORKER_THREADS", "0")) or None, help="CPU threads for torch (default torch's)")
    p.add_argument("--work-dir", default=e("TUNEBOARD_WORKER_WORK_DIR"), help="where checkpoints are written before upload (default the system temp dir)")
    p.add_argument("--heartbeat-seconds", type=float, default=None, help="default: a quarter of the server's lease")
    p.add_argument("--poll-max-seconds", type=float, default=5.0, help="longest wait between claims while idle, against a server that does not long-poll claims")
    p.add_argument("--once", action="store_true", help="run one job, then exit")
    p.add_argument("--exit-when-idle", type=float, default=None, metavar="SECONDS", help="exit after this long without a job")
    p.add_argument("--log-level", default=e("TUNEBOARD_WORKER_LOG_LEVEL", "INFO"))
    p.add_argument("--version", action="version", version=f"tuneboard-worker {__version__}")
    return p


def _split(v: str | None) -> list[str] | None:
    return [s.strip() for s in v.split(",") if s.strip()] if v else None


def _gpu_list(spec: str, device: str) -> list[str]:
    """GPU indices to run one process each on; [] = run in this process."""
    if spec == "none" or device != "auto":
        return []
    if spec == "auto":
        try:
            import torch

            n = torch.cuda.device_count()
        except Exception:
            n = 0
        return [str(i) for i in range(n)] if n > 1 else []
    return [s.strip() for s in spec.split(",") if s.strip()]


def _supervise(args: argparse.Namespace, gpus: list[str], worker_id: str) -> int:
    """One child process per GPU (each sees only its GPU), so jobs train in parallel and a crash stays local."""
    children: list[subprocess.Popen] = []
    argv = [a for a in sys.argv[1:]]
    for gpu in gpus:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu, "TUNEBOARD_WORKER_GPUS": "none", "TUNEBOARD_WORKER_ID": f"{worker_id}:gpu{gpu}"}
        cmd = [sys.executable, "-m", "tuneboard_worker", *argv, "--gpus", "none", "--device", "cuda:0", "--worker-id", f"{worker_id}:gpu{gpu}"]
        children.append(subprocess.Popen(cmd, env=env))

    def forward(signum, _frame):
        for c in children:
            if c.poll() is None:
                c.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    return max((c.wait() for c in children), default=0)


def configure_logging(level: str) -> None:
    """The worker's own lines at `level`. httpx logs every request at INFO, so an idle worker wrote a line per claim
    poll (405 lines in 14 minutes): its requests show at --log-level debug only."""
    logging.basicConfig(level=level.upper(), format="%(asctime)s [tuneboard-worker] %(levelname)s %(message)s")
    quiet = logging.DEBUG if level.upper() == "DEBUG" else logging.WARNING
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(quiet)


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level)
    if not args.token:
        print("TUNEBOARD_WORKER_TOKEN (or --token) is required: the server accepts the same value on its worker routes", file=sys.stderr)
        sys.exit(2)
    worker_id = args.worker_id or f"{socket.gethostname()}:{os.getpid()}"
    # Under torchrun every rank is already one process per GPU, training one job together (FSDP): no children.
    under_torchrun = int(os.environ.get("WORLD_SIZE", "1")) > 1
    gpus = [] if under_torchrun else _gpu_list(args.gpus, args.device)
    if len(gpus) > 1:
        sys.exit(_supervise(args, gpus, worker_id))
    if len(gpus) == 1:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpus[0]
        args.device = "cuda:0"
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from .runner import Options, TokenRefused, Worker

    opts = Options(
        server_url=args.server_url,
        token=args.token,
        worker_id=worker_id,
        device=args.device,
        dtype=args.dtype,
        models_dir=Path(args.models_dir).resolve(),
        hf_cache=args.hf_cache,
        base_models=_split(args.base_models),
        kinds=tuple(_split(args.kinds) or ["rl", "sft", "tinker"]),
        model_ids=_split(args.model_ids),
        micro_batch_tokens=args.micro_batch_tokens,
        max_seq_len_override=args.max_seq_len,
        gradient_checkpointing=args.gradient_checkpointing,
        work_dir=args.work_dir,
        once=args.once,
        exit_when_idle=args.exit_when_idle,
        poll_max_seconds=args.poll_max_seconds,
        heartbeat_seconds=args.heartbeat_seconds,
        max_training_clients=args.max_training_clients,
    )
    worker = Worker(opts)
    worker.install_signal_handlers()
    try:
        worker.run()
    except TokenRefused as err:
        # Non-zero, as for a missing token: a supervisor (systemd, Kubernetes) shows a failed start, not a
        # worker that runs and never trains.
        logging.getLogger("tuneboard_worker").error("%s", err)
        sys.exit(2)


if __name__ == "__main__":
    main()
