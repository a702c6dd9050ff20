"""PyTorch CPU anchor for `npm run bench:train`: trains the same tiny GPT shape as the built-in engine
(pre-LayerNorm blocks, causal multi-head attention with 64-wide heads, GELU-tanh MLP of width 4d, untied
head without bias) with AdamW, and prints the median training throughput of STEPS steps after two
warm-up steps.

Usage: python torch_tiny_gpt.py LAYERS D CTX BATCH VOCAB STEPS THREADS
"""
import math
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

L, D, CTX, B, V, STEPS, THREADS = (int(a) for a in sys.argv[1:8])
torch.set_num_threads(THREADS)
torch.manual_seed(0)
HEADS = max(1, D // 64)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm_attn, self.norm_mlp = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.attn_out = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.up, self.down = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (z.view(b, t, HEADS, D // HEADS).transpose(1, 2) for z in self.qkv(self.norm_attn(x)).split(D, dim=2))
        if hasattr(F, "scaled_dot_product_attention"):
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # old torch (Debian's 1.13): the explicit form
            s = (q @ k.transpose(-2, -1)) / math.sqrt(D // HEADS)
            a = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf")).softmax(-1) @ v
        x = x + self.attn_out(a.transpose(1, 2).reshape(b, t, D))
        return x + self.down(F.gelu(self.up(self.norm_mlp(x)), approximate="tanh"))


class TinyGpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(V, D), nn.Embedding(CTX, D)
        self.blocks = nn.ModuleList([Block() for _ in range(L)])
        self.norm, self.head = nn.LayerNorm(D), nn.Linear(D, V, bias=False)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


model = TinyGpt()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
inputs, targets = torch.randint(0, V, (B, CTX)), torch.randint(0, V, (B, CTX))
durations = []
for step in range(STEPS + 2):
    start = time.perf_counter()
    loss = F.cross_entropy(model(inputs).reshape(-1, V), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step >= 2:
        durations.append(time.perf_counter() - start)
median = sorted(durations)[len(durations) // 2]
params = sum(p.numel() for p in model.parameters())
print(
    f"torch {torch.__version__} threads={THREADS} L={L} d={D} params={params / 1e6:.2f}M "
    f"train_tok/s={B * CTX / median:.0f} step_s={median:.3f} loss={loss.item():.3f}"
)
