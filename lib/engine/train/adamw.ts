import type { Trainer } from './trainer';

export interface AdamWOptions {
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  /** Global gradient-norm clip (docs/contract.md §3.2: 1.0 for SFT; §5.6: 0.1 for RL); null = no clipping. */
  maxGradNorm?: number | null;
}

/**
 * AdamW with bias correction and PyTorch's decoupled weight decay, β1 0.9 / β2 0.99 by default (docs/contract.md §5.6),
 * over every parameter of a Trainer's model. Moments live on the same heap; updates run in one wasm kernel.
 * Norms are not decayed, as most trainers (HF's default parameter groups) exclude them — here decay applies
 * to matrices and embeddings only.
 */
export class AdamW {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  readonly maxGradNorm: number | null;
  private readonly moments = new Map<string, { m: number; v: number }>();
  private t = 0;
  private released = false;

  constructor(
    private readonly trainer: Trainer,
    options: AdamWOptions = {},
  ) {
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.99;
    this.eps = options.eps ?? 1e-8;
    this.weightDecay = options.weightDecay ?? 0;
    this.maxGradNorm = options.maxGradNorm ?? null;
    for (const [name, g] of trainer.grads) {
      this.moments.set(name, { m: trainer.heap.alloc(g.size, true), v: trainer.heap.alloc(g.size, true) });
    }
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.t;
  }

  /**
   * Clips the accumulated gradients to the global norm and applies one update at `lr`. Returns the
   * pre-clip norm, which is what trainers report as grad_norm.
   */
  step(lr: number): number {
    if (this.released) throw new Error('optimizer was released');
    const norm = this.trainer.gradNorm();
    if (!Number.isFinite(norm)) throw new Error(`gradient norm is not finite (${norm})`);
    const gradScale = this.maxGradNorm !== null && norm > this.maxGradNorm ? this.maxGradNorm / (norm + 1e-6) : 1;
    this.t++;
    const bc1 = 1 - Math.pow(this.beta1, this.t);
    const bc2 = 1 - Math.pow(this.beta2, this.t);
    const model = this.trainer.model;
    const heap = this.trainer.heap;
    for (const [name, g] of this.trainer.grads) {
      const mom = this.moments.get(name);
      if (!mom) throw new Error(`no moments for ${name}`);
      const decay = name.endsWith('norm.weight') ? 0 : this.weightDecay;
      heap.adamwStep(model.parameterLocation(name).ptr, g.ptr, mom.m, mom.v, g.size, {
        lr,
        beta1: this.beta1,
        beta2: this.beta2,
        eps: this.eps,
        weightDecay: decay,
        bc1,
        bc2,
        gradScale,
      });
    }
    model.invalidatePacked();
    return norm;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (const { m, v } of this.moments.values()) {
      this.trainer.heap.release(m);
      this.trainer.heap.release(v);
    }
    this.moments.clear();
  }
}
