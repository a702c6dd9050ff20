"""The worker's side of the Tinker protocol (docs/tinker.md §3.2–3.3): a poll round, each request run exactly
once and answered, the answers kept for re-deliveries, and heartbeats while requests run.

A request handed over again (the server lost the first answer) is answered from the cache, never run again: a
forward_backward run twice would add its gradient twice. The server hands a training client's next request only
once the previous has a result, so each client keeps its last few answers (clients.ANSWERS_KEPT); answers of
requests whose client is gone (unload_model, a create_model that failed) are kept by the service.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections import OrderedDict
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, ContextManager, Iterator

import httpx
import torch

from ..client import LeaseLost, ProtocolError, WorkerClient
from . import memory, ops
from .clients import ClientPool
from .errors import TinkerError, server_error, user_error

log = logging.getLogger("tuneboard_worker")

# Answers of requests whose training client is gone, for their re-delivery.
ORPHAN_ANSWERS_KEPT = 64
DEFAULT_LEASE_SECONDS = 60.0
# Kinds logged at INFO; the training loop's own (forward, forward_backward, optim_step) at DEBUG.
_RARE_KINDS = {"create_model", "unload_model", "save_weights", "save_weights_for_sampler", "load_weights"}

Answer = dict[str, Any]  # {"result": {...}} or {"error": {"message", "category"}}


class TinkerService:
    def __init__(
        self,
        client: WorkerClient,
        pool: ClientPool,
        *,
        worker_id: str,
        max_clients: int,
        micro_batch_tokens: int,
        heartbeat_seconds: float | None = None,
        kinds: list[str] | None = None,
        interruptible: Callable[[], ContextManager[None]] = nullcontext,
    ):
        # Wraps the long poll's wait: the worker's own makes a stop signal end it at once (runner.Worker).
        self.interruptible = interruptible
        # The worker's kinds as its job claims send them (the registry keeps whichever came last).
        self.kinds = kinds or ["tinker"]
        self.client = client
        self.pool = pool
        self.worker_id = worker_id
        self.max_clients = max_clients
        self.micro_batch_tokens = micro_batch_tokens
        self.heartbeat_seconds = heartbeat_seconds
        # The server's lease (TUNEBOARD_JOB_LEASE_SECONDS) when its poll answer says it (`lease_seconds`).
        self.lease_seconds = DEFAULT_LEASE_SECONDS
        self.orphan_answers: OrderedDict[str, Answer] = OrderedDict()
        # What the heartbeat thread reports: a snapshot the main thread replaces (never mutates) after each change.
        self._held: tuple[str, ...] = ()
        self._drops: set[str] = set()
        self._drops_lock = threading.Lock()

    # --- state ------------------------------------------------------------------------------------------------

    def held(self) -> list[str]:
        return list(self._held)

    def accept_new(self) -> bool:
        if len(self.pool.clients) >= self.max_clients:
            return False
        return memory.fits_new_client(self.pool.device, self.pool.loaded_models())

    def free(self, model_id: str, why: str) -> None:
        if self.pool.free(model_id):
            log.info("training client %s freed: %s", model_id, why)
        self._held = tuple(self.pool.clients)

    def shutdown(self) -> None:
        """The worker stops: the clients' state in memory is lost; the server fails them once it stops seeing this
        worker (its lease), and their users resume from their last save_state."""
        if self.pool.clients:
            log.warning(
                "stopping with %d training client(s) held (%s): their state in memory is lost; the server fails "
                "them when this worker is no longer seen (TUNEBOARD_JOB_LEASE_SECONDS), and they can be resumed "
                "from their last save_state",
                len(self.pool.clients),
                ", ".join(self.pool.clients),
            )
        for model_id in list(self.pool.clients):
            self.pool.free(model_id)
        self._held = ()

    # --- the poll round ---------------------------------------------------------------------------------------

    def poll(self, capabilities: dict[str, Any], info: dict[str, Any], wait_ms: int, stop: threading.Event) -> int:
        """One long poll and what it hands over, in order, each answered before the next poll. Returns how many
        requests came. Stops between requests once `stop` is set (SIGTERM: the current one is finished)."""
        self._apply_heartbeat_drops()  # one that came after the last round's last request
        with self.interruptible():
            answer = self.client.tinker_poll(capabilities, info, self.held(), self.accept_new(), wait_ms, self.kinds)
        if answer.get("lease_seconds"):
            self.lease_seconds = float(answer["lease_seconds"])
            self.client.tinker_retry_seconds = self.lease_seconds
        for model_id in answer.get("drop") or []:
            self.free(model_id, "the server dropped it")
        requests = answer.get("requests") or []
        if requests:
            with self._heartbeats():
                for request in requests:
                    if stop.is_set():
                        break
                    self._post(request, self.answer(request))
                    self._apply_heartbeat_drops()
        return len(requests)

    @contextmanager
    def _heartbeats(self) -> Iterator[None]:
        """While requests run, the worker does not poll, and a poll is its liveness signal: a thread calls the
        heartbeat route every quarter lease, so one long forward_backward does not make the server fail it."""
        done = threading.Event()
        every = self.heartbeat_seconds or max(1.0, self.lease_seconds / 4)

        def beat() -> None:
            while not done.wait(every):
                try:
                    drop = self.client.tinker_heartbeat(list(self._held))
                except Exception as err:  # noqa: BLE001 - the next beat tries again; the server may be restarting
                    log.warning("tinker heartbeat failed: %s", err)
                    continue
                with self._drops_lock:
                    self._drops.update(drop)

        thread = threading.Thread(target=beat, name="tinker-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()

    def _apply_heartbeat_drops(self) -> None:
        """Drops a heartbeat answered, applied between requests (never under a running one)."""
        with self._drops_lock:
            drops, self._drops = self._drops, set()
        for model_id in drops:
            self.free(model_id, "the server dropped it")

    def _post(self, request: dict[str, Any], answer: Answer) -> None:
        request_id, model_id = request["request_id"], request["model_id"]
        try:
            self.client.tinker_result(request_id, **answer)
        except LeaseLost:
            # The training client failed on the server meanwhile (docs/tinker.md §3.3): its state here is of no use.
            self.free(model_id, "the server no longer gives it to this worker (409)")
        except Exception as err:  # noqa: BLE001 - the answer stays cached: the server hands the request again
            log.warning("could not post the answer to request %s (%s); it is sent again when the server re-delivers it", request_id, err)

    # --- one request, exactly once ----------------------------------------------------------------------------

    def answer(self, request: dict[str, Any]) -> Answer:
        """The request's answer: from the cache when it was answered before, else by running it."""
        request_id, model_id = request["request_id"], request["model_id"]
        client = self.pool.get(model_id)
        cached = client.answers.get(request_id) if client is not None else None
        if cached is None:
            cached = self.orphan_answers.get(request_id)
        if cached is not None:
            log.info("request %s (%s of %s) was handed over again: answering it from the cache", request_id, request.get("kind"), model_id)
            return cached
        answer = self._run(request)
        client = self.pool.get(model_id)
        if client is not None:
            client.remember(request_id, answer)
        else:
            self.orphan_answers[request_id] = answer
            while len(self.orphan_answers) > ORPHAN_ANSWERS_KEPT:
                self.orphan_answers.popitem(last=False)
        return answer

    def _run(self, request: dict[str, Any]) -> Answer:
        kind, model_id = request["kind"], request["model_id"]
        started = time.monotonic()
        try:
            result = self._execute(request)
        except TinkerError as err:
            (log.info if err.category == "user" else log.error)("%s of %s failed (%s): %s", kind, model_id, err.category, err)
            return {"error": {"message": str(err), "category": err.category}}
        except torch.cuda.OutOfMemoryError:
            log.error("%s of %s ran out of GPU memory:\n%s", kind, model_id, traceback.format_exc())
            torch.cuda.empty_cache()
            message = (
                f"the GPU of worker {self.worker_id} ran out of memory in {kind}: close training clients you no "
                "longer use (unload_model), or use a worker with more memory"
            )
            return {"error": {"message": message, "category": "server"}}
        except Exception as err:  # noqa: BLE001 - every failure must reach the caller, not stop the worker
            log.error("%s of %s failed:\n%s", kind, model_id, traceback.format_exc())
            message = f"internal error on worker {self.worker_id} in {kind} ({type(err).__name__}: {str(err)[:300]}); see the worker's log"
            return {"error": {"message": message, "category": "server"}}
        finally:
            self._held = tuple(self.pool.clients)
        (log.info if kind in _RARE_KINDS else log.debug)("%s of %s done in %.2f s", kind, model_id, time.monotonic() - started)
        return {"result": result}

    def _execute(self, request: dict[str, Any]) -> dict[str, Any]:
        kind, model_id, request_id = request["kind"], request["model_id"], request["request_id"]
        payload = request.get("payload") or {}
        if kind == "create_model":
            created = self.pool.create(model_id, payload)
            return {"trainable_parameters": created.trainable_parameters, "target_modules": created.target_modules}
        client = self.pool.get(model_id)
        if client is None:
            if kind == "unload_model":
                return {}  # already freed (dropped): nothing left to free
            raise server_error(
                f"training client {model_id} is not held by worker {self.worker_id}: its state in memory is lost (the "
                "worker restarted or freed it). Resume from its last save_state (create_training_client_from_state)."
            )
        if kind in ("forward", "forward_backward"):
            return ops.forward(self.pool, client, payload, backward=kind == "forward_backward", micro_batch_tokens=self.micro_batch_tokens)
        if kind == "optim_step":
            return ops.optim_step(client, payload)
        if kind in ("save_weights", "save_weights_for_sampler"):
            put: Callable[[str, bytes], None] = lambda name, data: self._put_file(request_id, name, data)
            return ops.save_weights(client, put, with_optimizer=kind == "save_weights")
        if kind == "load_weights":
            return ops.load_weights(client, payload, lambda name: self._get_file(request_id, name))
        if kind == "unload_model":
            self.free(model_id, "unload_model")
            return {}
        raise server_error(f"worker {self.worker_id} does not know request kind {kind!r}: update tuneboard-worker")

    def _put_file(self, request_id: str, name: str, data: bytes) -> None:
        try:
            self.client.tinker_put_file(request_id, name, data)
        except LeaseLost:
            raise  # the client failed on the server meanwhile; posting the answer frees it here
        except ProtocolError as err:
            raise server_error(f"the server answered {err.status} to the upload of {name} ({err.text[:200] or 'no message'})") from err
        except httpx.TransportError as err:
            raise server_error(f"worker {self.worker_id} could not reach the server to upload {name} ({type(err).__name__}: {err})") from err

    def _get_file(self, request_id: str, name: str) -> bytes:
        try:
            return self.client.tinker_get_file(request_id, name)
        except LeaseLost:
            raise
        except ProtocolError as err:
            if err.status == 404:
                raise user_error(f"the saved state's {name} is not on the server any more (expired or deleted)") from err
            raise server_error(f"the server answered {err.status} to fetching the state's {name} ({err.text[:200] or 'no message'})") from err
        except httpx.TransportError as err:
            raise server_error(f"worker {self.worker_id} could not reach the server to fetch {name} ({type(err).__name__}: {err})") from err
