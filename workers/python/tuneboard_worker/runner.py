"""The worker loop: claim a job this worker can train, heart-beat while training, report events, upload the
adapter, complete, and turn every failure into a job error that says what to do. Between jobs it long-polls for
Tinker training clients' requests (tinker/service.py), and while it holds training clients it serves them alone."""

from __future__ import annotations

import errno
import logging
import os
import platform
import signal
import socket
import tempfile
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import httpx
import torch

from . import __version__, distributed
from .client import LeaseLost, ProtocolError, WorkerClient
from .model import (
    TrainingError,
    attach_adapter,
    cached_base,
    detach_adapter,
    drop_cache,
    load_base,
    lora_settings,
    pick_dtype,
    resolve_model_source,
    save_adapter,
)
from .tinker.clients import ClientPool
from .tinker.service import TinkerService

log = logging.getLogger("tuneboard_worker")

# How long a poll for training clients' requests waits while the worker holds some (docs/tinker.md §3.2).
TINKER_WAIT_MS = 10_000
# How long a claim waits at the server for a job (a long poll; the server caps it at 25 s): a job queued meanwhile is
# claimed within milliseconds, instead of at the next poll of a back-off that grew to poll_max_seconds.
CLAIM_WAIT_SECONDS = 20.0


class Cancelled(Exception):
    """The job was cancelled on the server (or the lease lost): stop without reporting anything."""


class Stopped(Exception):
    """The worker was told to stop now (a second SIGTERM/SIGINT) in the middle of a job."""


class WaitInterrupted(BaseException):
    """A stop signal that came while the worker only waited on the server's long poll. Nothing was running that
    must be finished, so the wait ends at once instead of after up to TINKER_WAIT_MS. A BaseException, so that
    the poll's `except Exception` (server down: keep polling) does not swallow it."""


class TokenRefused(Exception):
    """The server refused the worker token: no retry can fix that, the worker must stop and say so."""


@dataclass
class Options:
    server_url: str
    token: str
    worker_id: str
    device: str = "auto"
    dtype: str = "auto"
    models_dir: Path = Path(".")
    hf_cache: str | None = None
    base_models: list[str] | None = None
    kinds: tuple[str, ...] = ("rl", "sft", "tinker")
    model_ids: list[str] | None = None
    micro_batch_tokens: int = 4096
    max_seq_len_override: int | None = None
    gradient_checkpointing: str = "auto"
    work_dir: str | None = None
    once: bool = False
    exit_when_idle: float | None = None
    poll_max_seconds: float = 5.0
    heartbeat_seconds: float | None = None
    max_training_clients: int = 8

    def torch_device(self) -> torch.device:
        if self.device == "auto":
            return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    def max_seq_len(self, model: Any) -> int:
        if self.max_seq_len_override:
            return self.max_seq_len_override
        return int(getattr(model.config, "max_position_embeddings", 0) or 4096)

    def use_gradient_checkpointing(self, device: torch.device) -> bool:
        if self.gradient_checkpointing == "auto":
            return device.type == "cuda"
        return self.gradient_checkpointing == "on"


class JobContext:
    def __init__(self, client: WorkerClient, job: dict, stop_now: threading.Event):
        self.client = client
        self.job = job
        self.cancelled = threading.Event()
        self.stop_now = stop_now
        self.started_sent = False
        self.extras: dict[str, float] = {}
        self.steps = 0
        # Speed, in the events themselves (docs/contract.md §3.5): training_started says how long the job took to get
        # going (load_seconds, from the claim: input, weights, the base model), each gradient_step its duration and
        # trained tokens per second.
        self.claimed_at = time.monotonic()
        self._mark = self.claimed_at

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled()
        if self.stop_now.is_set():
            raise Stopped()

    def started(self, num_sequences: int) -> None:
        self.started_sent = True
        self._mark = time.monotonic()
        data = {"num_sequences": int(num_sequences), "load_seconds": self._mark - self.claimed_at, **self.extras}
        self.client.append_events(self.job["id"], [{"type": "training_started", "data": data}])

    def step_data(self, metrics: dict[str, float]) -> dict[str, float]:
        """The gradient_step's data: the metrics, and the step's speed (step_speed)."""
        now = time.monotonic()
        data = {k: float(v) for k, v in metrics.items()}
        data.update(step_speed(data, now - self._mark))
        self._mark = now
        return data

    def step(self, metrics: dict[str, float]) -> None:
        self.check()
        self.client.append_events(self.job["id"], [{"type": "gradient_step", "data": self.step_data(metrics)}])
        self.steps += 1


def step_speed(metrics: dict[str, float], seconds: float) -> dict[str, float]:
    """step_seconds: the time since the previous step (or training_started) was reported, so the steps add up to the
    training time; tokens_per_second: the step's trained tokens (num_trainable_tokens) per second of it. The same
    fields as the built-in worker's (lib/jobs/worker/runner.ts speedOf)."""
    out = {"step_seconds": float(seconds)}
    tokens = metrics.get("num_trainable_tokens")
    if tokens is not None and seconds > 0:
        out["tokens_per_second"] = float(tokens) / seconds
    return out


def ignored_settings(config: dict) -> dict[str, float]:
    """Settings the client sent that this worker does not act on, as numeric extras of training_started
    (`ignored/<key>`: the value, 1 for a flag or a string), so they are visible instead of silently dropped."""
    out: dict[str, float] = {}
    for k, v in (config.get("extra_settings") or {}).items():
        if isinstance(v, bool):
            out[f"ignored/{k}"] = 1.0 if v else 0.0
        elif isinstance(v, (int, float)):
            out[f"ignored/{k}"] = float(v)
        else:
            out[f"ignored/{k}"] = 1.0
    return out


def worker_info(opts: Options) -> dict[str, Any]:
    device = opts.torch_device()
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"
    return {
        "hostname": socket.gethostname(),
        "pid": os.getpid(),
        "device": f"{device} ({name})" if name else str(device),
        "worker": f"tuneboard-worker {__version__}",
        "torch": torch.__version__,
    }


def failure_message(err: BaseException, job: dict, opts: Options) -> str:
    if isinstance(err, TrainingError):
        return str(err)
    if isinstance(err, torch.cuda.OutOfMemoryError) or "out of memory" in str(err).lower():
        return (
            f"The GPU ran out of memory training {job['base_model']} on worker {opts.worker_id}. Lower batch_size, "
            f"start the worker with a smaller --micro-batch-tokens (now {opts.micro_batch_tokens}) or --max-seq-len, "
            "or use a GPU with more memory (or several: see 'Models larger than one GPU' in the worker README)."
        )
    if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
        where = opts.work_dir or tempfile.gettempdir()
        return f"The disk of worker {opts.worker_id} is full (writing the checkpoint under {where}): free space there or start the worker with --work-dir on a larger disk."
    if isinstance(err, ProtocolError) and err.status == 413:
        return "The server refused the checkpoint as too large (TUNEBOARD_MAX_CHECKPOINT_MB on the server); use a smaller lora_rank."
    if isinstance(err, httpx.TransportError):
        return (
            f"Worker {opts.worker_id} could not reach the Tuneboard server at {opts.server_url} for longer than the "
            f"job's lease ({type(err).__name__}: {str(err)[:200]}); submit the job again."
        )
    if isinstance(err, ProtocolError):
        # The server refused or failed a call after the client's retries: say which, with the server's own words,
        # rather than "internal error" (a 5xx on the checkpoint upload reads as a worker bug otherwise).
        return (
            f"The Tuneboard server answered {err.status} to worker {opts.worker_id}'s {err.call} "
            f"({err.text[:300] or 'no message'}){', after retries' if err.status >= 500 else ''}; submit the job again, "
            "and if it recurs see the server's log."
        )
    if isinstance(err, Stopped):
        return f"The worker {opts.worker_id} was stopped during training (signal); submit the job again."
    return f"Training failed with an internal error ({type(err).__name__}: {str(err)[:300]}); see the log of worker {opts.worker_id}"


class Worker:
    def __init__(self, opts: Options, client: WorkerClient | None = None):
        self.opts = opts
        self.client = client or WorkerClient(opts.server_url, opts.token, opts.worker_id)
        self.stop = threading.Event()  # finish the current job, claim no more
        self.stop_now = threading.Event()  # abandon the current job at the next step
        self._waiting = False  # inside interruptible(): a stop signal ends the wait at once
        self.device = opts.torch_device()
        # Under torchrun: one process per GPU, one job trained by all of them (FSDP); rank 0 alone talks to the
        # server. SFT splits each batch's rows over the ranks (sft.py); RL trains each step's one row on every
        # rank (rl.py).
        self.world = 1
        if distributed.launched_distributed():
            self.device = distributed.init_process_group("cpu" if self.device.type == "cpu" else "auto")
            self.world = distributed.world_size()
        self.info = worker_info(opts)
        self.job_kinds = [k for k in opts.kinds if k != "tinker"]
        # Tinker training clients (docs/tinker.md §3) live in one process's memory: not under torchrun, whose
        # ranks train one job together.
        self.tinker: TinkerService | None = None
        if "tinker" in opts.kinds and self.world == 1:
            pool = ClientPool(
                self.device,
                pick_dtype(self.device, opts.dtype),
                opts.models_dir,
                opts.hf_cache,
                opts.use_gradient_checkpointing(self.device),
            )
            self.tinker = TinkerService(
                self.client,
                pool,
                worker_id=opts.worker_id,
                max_clients=opts.max_training_clients,
                micro_batch_tokens=opts.micro_batch_tokens,
                heartbeat_seconds=opts.heartbeat_seconds,
                kinds=self.job_kinds + ["tinker"],
                interruptible=self.interruptible,
            )
        elif "tinker" in opts.kinds and distributed.rank() == 0:
            log.info("Tinker training clients are off under torchrun (WORLD_SIZE>1): they live in one process's memory")

    def registered_kinds(self) -> list[str]:
        """What the worker registry records of this worker: its job kinds, and `tinker` while it takes training
        clients. Claims and Tinker polls both send it, so the Workers page shows the same whichever came last (the
        server never hands out a job of kind `tinker`)."""
        return self.job_kinds + (["tinker"] if self.tinker is not None else [])

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {"backends": ["hf"]}
        if self.opts.base_models:
            caps["base_models"] = self.opts.base_models
        return caps

    @contextmanager
    def interruptible(self):
        """While inside, a stop signal raises WaitInterrupted here (signal handlers run in the main thread, where
        the poll loop runs) rather than waiting for the long poll to come back."""
        if self.stop.is_set():
            raise WaitInterrupted()
        self._waiting = True
        try:
            yield
        finally:
            self._waiting = False

    def install_signal_handlers(self) -> None:
        def on_signal(signum, _frame):
            if self.stop.is_set():
                log.warning("second %s: abandoning the current job", signal.Signals(signum).name)
                self.stop_now.set()
            else:
                log.warning("%s: finishing the current job, then exiting (send it again to stop now)", signal.Signals(signum).name)
                self.stop.set()
            if self._waiting:
                raise WaitInterrupted()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)

    def run(self) -> None:
        clean = False
        try:
            if self.world > 1 and distributed.rank() != 0:
                self._follow()
            else:
                try:
                    self._lead()
                finally:
                    if self.world > 1:
                        distributed.broadcast(None)  # the other ranks exit too
            clean = True
        finally:
            if self.world > 1:
                distributed.close(together=clean)

    def _follow(self) -> None:
        """Ranks > 0: train each job rank 0 broadcasts, until it broadcasts None."""
        while True:
            msg = distributed.broadcast(None)
            if msg is None:
                return
            try:
                self._train_loaded(msg["job"], msg["job_input"], msg["adapter"], distributed.FollowerContext())
            except (Cancelled, Stopped):
                pass
            except BaseException:  # noqa: BLE001 - rank 0 reports the job's failure; this rank only logs
                log.error("rank %d: job %s failed:\n%s", distributed.rank(), msg["job"]["id"], traceback.format_exc())

    def _lead(self) -> None:
        serves = [f"{','.join(self.job_kinds)} jobs"] if self.job_kinds else []
        if self.tinker is not None:
            serves.append(f"Tinker training clients (at most {self.opts.max_training_clients})")
        log.info("%s polling %s for %s (%s)", self.opts.worker_id, self.opts.server_url, " and ".join(serves), self.info["device"])
        refused = False
        try:
            self._poll()
        except TokenRefused:
            refused = True
            raise
        finally:
            # After the Tinker clients were shut down (_poll) and any job ended: the registry drops this worker now,
            # not once it has been silent for the live window. A refused token cannot sign off either.
            if not refused and self.client.sign_off():
                log.info("signed off from %s", self.opts.server_url)
            self.client.close()

    def _poll(self) -> None:
        try:
            self._poll_loop()
        except WaitInterrupted:
            log.info("stopped while waiting for work")
        finally:
            if self.tinker is not None:
                self.tinker.shutdown()

    def _poll_loop(self) -> None:
        idle = 0.25
        idle_since = time.monotonic()
        while not self.stop.is_set():
            # Holding training clients, the worker serves them alone: it long-polls their requests and claims no
            # job, since a job would take the base model (model.py's cache) and the time their requests wait for.
            if self.tinker is not None and self.tinker.held():
                self._tinker_poll(TINKER_WAIT_MS, idle)
                idle_since = time.monotonic()
                continue
            job = None
            held = False
            if self.job_kinds:
                wait = self._claim_wait(idle_since)
                asked = time.monotonic()
                try:
                    # A stop signal ends a parked claim at once (the server, seeing the request end, claims nothing).
                    with self.interruptible():
                        job = self.client.claim(self.registered_kinds(), self.capabilities(), self.info, self.opts.model_ids, wait_seconds=wait)
                    # The server held the claim (a long poll that ran out): no back-off needed before the next. A
                    # null that came sooner is an older server (it answers at once) or a new training client waiting.
                    held = wait > 0 and time.monotonic() - asked >= wait / 2
                except WaitInterrupted:
                    raise
                except Exception as err:
                    self._refused(err)
                    log.warning("claim failed: %s", err)  # the server is down or restarting: keep polling
            if job is None:
                if self.opts.exit_when_idle is not None and time.monotonic() - idle_since > self.opts.exit_when_idle:
                    break
                if held:
                    idle = 0.25
                    # A look for training clients between two long claims, without waiting: the claim itself ends
                    # early when one is created (the server wakes it), so they start at once too.
                    if self.tinker is not None:
                        self._tinker_poll(0, idle)
                    continue
                if self.tinker is None:
                    self.stop.wait(idle)
                # No job: instead of sleeping the claim's back-off, wait that long for a training client's request,
                # so a new training client starts at once while claims keep their pace.
                elif self._tinker_poll(int(idle * 1000) if self.job_kinds else TINKER_WAIT_MS, idle):
                    idle, idle_since = 0.25, time.monotonic()
                    continue
                idle = min(idle * 2, self.opts.poll_max_seconds)
                continue
            idle = 0.25
            self.run_job(job)
            idle_since = time.monotonic()
            if self.opts.once:
                break

    def _claim_wait(self, idle_since: float) -> float:
        """How long the next claim may wait at the server: CLAIM_WAIT_SECONDS, less what is left before an idle exit."""
        wait = CLAIM_WAIT_SECONDS
        if self.opts.exit_when_idle is not None:
            wait = min(wait, self.opts.exit_when_idle - (time.monotonic() - idle_since))
        return wait if wait >= 0.5 else 0.0

    def _tinker_poll(self, wait_ms: int, backoff: float) -> int:
        """One Tinker poll round; how many requests it ran. A failed poll waits `backoff` before the next."""
        assert self.tinker is not None
        try:
            return self.tinker.poll(self.capabilities(), self.info, wait_ms, self.stop)
        except Exception as err:
            self._refused(err)
            if isinstance(err, ProtocolError) and err.status == 404:
                # A server without the Tinker routes (an older version): say so once, and claim jobs as before.
                log.warning("the server at %s does not offer Tinker training clients (404 on the poll): they are off for this worker", self.opts.server_url)
                self.tinker.shutdown()
                self.tinker = None
                return 0
            log.warning("tinker poll failed: %s", err)  # the server is down or restarting: keep polling
            self.stop.wait(backoff)
            return 0

    def _refused(self, err: Exception) -> None:
        """A wrong token is refused on every try: polling on would only repeat the warning forever."""
        if isinstance(err, ProtocolError) and err.status in (401, 403):
            raise TokenRefused(
                f"The Tuneboard server at {self.opts.server_url} refused the worker token ({err.status}: "
                f"{err.text[:200] or 'no message'}). Set TUNEBOARD_WORKER_TOKEN (or --token) to the server's "
                "TUNEBOARD_WORKER_TOKEN; a server started without one admits no external worker."
            ) from err

    def _heartbeat(self, ctx: JobContext, done: threading.Event, every: float) -> None:
        while not done.wait(every):
            try:
                if self.client.heartbeat(ctx.job["id"], self.info):
                    ctx.cancelled.set()
                    return
            except LeaseLost:
                ctx.cancelled.set()
                return
            except Exception as err:
                log.warning("heartbeat failed: %s", err)

    def run_job(self, job: dict) -> None:
        ctx: Any = JobContext(self.client, job, self.stop_now)
        done = threading.Event()
        lease = float(job.get("lease_seconds", 60))
        every = self.opts.heartbeat_seconds or max(1.0, lease / 4)
        self.client.job_retry_seconds = lease
        beat = threading.Thread(target=self._heartbeat, args=(ctx, done, every), daemon=True)
        beat.start()
        log.info("job %s: %s on %s", job["id"], job["kind"], job["base_model"])
        try:
            self._train(job, distributed.LeaderContext(ctx) if self.world > 1 else ctx)
            log.info("job %s completed", job["id"])
        except (Cancelled, LeaseLost):
            log.info("job %s cancelled or taken away; stopped", job["id"])
        except BaseException as err:  # noqa: BLE001 - every failure must reach the server
            if not isinstance(err, (TrainingError, Stopped)):
                log.error("job %s failed:\n%s", job["id"], traceback.format_exc())
            message = failure_message(err, job, self.opts)
            try:
                self.client.fail(job["id"], message)
            except LeaseLost:
                pass
            except Exception as report_err:
                log.error("could not report the failure of job %s: %s", job["id"], report_err)
            if isinstance(err, KeyboardInterrupt):
                raise
        finally:
            done.set()
            if self.device.type == "cuda":
                torch.cuda.empty_cache()

    def _train(self, job: dict, ctx: Any) -> None:
        if job.get("backend") != "hf":
            raise TrainingError(f"This worker trains Hugging Face (hf) models; {job['base_model']} is not one")
        resolve_model_source(job["base_model"], job.get("base_model_path"), self.opts.models_dir)
        job_input = self.client.job_input(job["id"])
        adapter = None
        if job.get("base_checkpoint") and job["base_checkpoint"].get("artifact_key"):
            weights = self.client.base_weights(job["id"])
            config_bytes = self.client.base_weights(job["id"], "adapter_config.json")
            if weights is None or config_bytes is None:
                raise TrainingError(f"The previous checkpoint (step {job['base_checkpoint']['step']}) is not a LoRA adapter this worker can train on")
            adapter = (config_bytes, weights)
        if self.world > 1:
            # Everything the other ranks need, once rank 0 has it all: a failure before this point is rank 0's alone.
            distributed.broadcast({"job": job, "job_input": job_input, "adapter": adapter})
        self._train_loaded(job, job_input, adapter, ctx)

    def _train_loaded(self, job: dict, job_input: dict, adapter: tuple[bytes, bytes] | None, ctx: Any) -> None:
        """Trains and (on rank 0) uploads; every rank runs this with the same job under FSDP."""
        from .rl import train_rl
        from .sft import train_sft

        sharded = self.world > 1
        source = resolve_model_source(job["base_model"], job.get("base_model_path"), self.opts.models_dir)
        dtype = pick_dtype(self.device, self.opts.dtype)
        # Sharded, the model is loaded in CPU memory and fully_shard moves each rank's shard onto its GPU.
        load_on = torch.device("cpu") if sharded else self.device
        # Kept in memory between jobs (model.py): the RL loop's next job on the same base model starts without loading.
        cached = cached_base(source, load_on, dtype) is not None
        loading = time.monotonic()
        base = load_base(source, job["base_model"], load_on, dtype, self.opts.hf_cache)
        config = job["config"]
        ctx.extras = {
            **ignored_settings(config),
            "base_model_cached": 1.0 if cached else 0.0,
            "base_model_load_seconds": time.monotonic() - loading,
        }
        # A fixed seed: a new adapter's initialisation (and dropout) is the same on every run of a job.
        torch.manual_seed(0)
        peft_model = attach_adapter(base, lora_settings(config.get("lora")), adapter, self.opts.use_gradient_checkpointing(self.device))
        if sharded:
            drop_cache()  # fully_shard rewrites the model in place: it cannot serve the next job
            distributed.shard_model(peft_model, self.device)
        try:
            train: Callable[..., dict] = train_sft if job["kind"] == "sft" else train_rl
            metrics = train(peft_model, base.tokenizer, job_input, config, ctx, self.device, self.opts)
            ctx.check()
            if not ctx.started_sent:
                ctx.started(0)
            if ctx.steps == 0 and adapter is not None:
                # Nothing was trained: the previous adapter, byte for byte.
                config_bytes, weights = adapter
            else:
                # Sharded, every rank takes part in gathering the LoRA weights; rank 0 alone writes them.
                state = distributed.full_trainable_state(peft_model) if sharded else None
                if distributed.rank() != 0:
                    return
                with tempfile.TemporaryDirectory(prefix="tuneboard-ckpt-", dir=self.opts.work_dir) as d:
                    config_bytes, weights = save_adapter(peft_model, job["base_model"], Path(d), state)
            if distributed.rank() != 0:
                return
            # The config first: complete() requires both files, and neither is listed until it succeeds.
            self.client.upload(job["id"], "adapter_config.json", config_bytes)
            key = self.client.upload(job["id"], "adapter_model.safetensors", weights)
            self.client.complete(job["id"], key, {k: float(v) for k, v in metrics.items()})
        finally:
            if not sharded:
                detach_adapter(peft_model)
