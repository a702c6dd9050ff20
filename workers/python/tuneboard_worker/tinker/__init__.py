"""Tinker training clients (docs/tinker.md §3): LoRA training states that live in this worker's memory and run
the SDK's per-call primitives (forward, forward_backward, optim_step, save/load weights) as the server hands
them over.

- tensors: the wire tensors of docs/tinker.md §3.1.
- losses: the loss functions of docs/tinker.md §2.4 and the checks of their inputs.
- clients: the training clients and the base models they share (one PEFT model per base, one adapter each).
- ops: what each request kind does to a training client.
- memory: whether there is room for one more training client.
- service: the requests' dispatch, exactly-once answers, the poll round and its heartbeats.
"""
