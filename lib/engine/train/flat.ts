import type { Model } from '../model';
import type { Trainer } from './trainer';

/**
 * All parameters (or gradients) as one flat array in canonical tensor order: what data-parallel training
 * ships between threads (weights out once per step, gradients back). Each thread has its own heap, so this
 * is a copy; at 0.5–4 M floats it costs milliseconds against steps of hundreds.
 */
export function flatSize(model: Model): number {
  return model.tensorNames().reduce((n, name) => n + model.parameterLocation(name).size, 0);
}

export function copyWeightsOut(model: Model, dst: Float32Array = new Float32Array(flatSize(model))): Float32Array {
  const f = model.heap.f32;
  let o = 0;
  for (const name of model.tensorNames()) {
    const { ptr, size } = model.parameterLocation(name);
    dst.set(f.subarray(ptr, ptr + size), o);
    o += size;
  }
  return dst;
}

export function copyWeightsIn(model: Model, src: Float32Array): void {
  if (src.length !== flatSize(model)) throw new Error(`weights: expected ${flatSize(model)} floats, got ${src.length}`);
  const f = model.heap.f32;
  let o = 0;
  for (const name of model.tensorNames()) {
    const { ptr, size } = model.parameterLocation(name);
    f.set(src.subarray(o, o + size), ptr);
    o += size;
  }
  model.invalidatePacked();
}

export function copyGradientsOut(trainer: Trainer): Float32Array {
  const f = trainer.heap.f32;
  const out = new Float32Array(flatSize(trainer.model));
  let o = 0;
  for (const name of trainer.model.tensorNames()) {
    const g = trainer.grads.get(name);
    if (!g) throw new Error(`no gradient for ${name}`);
    out.set(f.subarray(g.ptr, g.ptr + g.size), o);
    o += g.size;
  }
  return out;
}

/** Adds another thread's gradients into this trainer's (the all-reduce of a two-way data-parallel step). */
export function addGradientsIn(trainer: Trainer, src: Float32Array): void {
  const f = trainer.heap.f32;
  let o = 0;
  for (const name of trainer.model.tensorNames()) {
    const g = trainer.grads.get(name);
    if (!g) throw new Error(`no gradient for ${name}`);
    for (let i = 0; i < g.size; i++) f[g.ptr + i] += src[o + i];
    o += g.size;
  }
  if (o !== src.length) throw new Error(`gradients: expected ${o} floats, got ${src.length}`);
}
