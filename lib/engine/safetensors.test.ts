import { describe, expect, it } from 'vitest';
import { Model, type ModelConfig } from './model';
import { CONFIG_METADATA_KEY, decodeModel, decodeSafetensors, encodeModel, encodeSafetensors } from './safetensors';

function rawFile(header: object, data: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

describe('safetensors', () => {
  it('writes the documented layout: u64 LE header length, space-padded JSON, F32 data', () => {
    const bytes = encodeSafetensors([{ name: 'a', shape: [2], data: Float32Array.of(1, -2) }], { format: 'pt' });
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(n % 8).toBe(0);
    const header = new TextDecoder().decode(bytes.subarray(8, 8 + n));
    expect(JSON.parse(header)).toEqual({
      __metadata__: { format: 'pt' },
      a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
    });
    expect(header.endsWith(' ') || header.endsWith('}')).toBe(true);
    expect(Array.from(new Float32Array(bytes.slice(8 + n).buffer))).toEqual([1, -2]);
  });

  it('round-trips tensors, shapes and metadata', () => {
    const tensors = [
      { name: 'model.embed_tokens.weight', shape: [3, 2], data: Float32Array.of(1, 2, 3, 4, 5, 6.5) },
      { name: 'model.norm.weight', shape: [2], data: Float32Array.of(-0, 1e-30) },
      { name: 'scalar', shape: [], data: Float32Array.of(7) },
      { name: 'empty', shape: [0, 4], data: new Float32Array(0) },
    ];
    const { tensors: out, metadata } = decodeSafetensors(encodeSafetensors(tensors, { k: 'v' }));
    expect(metadata).toEqual({ k: 'v' });
    expect([...out.keys()]).toEqual(tensors.map((t) => t.name));
    for (const t of tensors) {
      expect(out.get(t.name)?.shape).toEqual(t.shape);
      expect(out.get(t.name)?.data).toEqual(t.data);
    }
  });

  it('reads F16, BF16 and F64 into float32', () => {
    const f16 = Uint16Array.of(0x3c00, 0xc000, 0x0001, 0x7c00); // 1, -2, 2^-24, +inf
    const bf16 = Uint16Array.of(0x3f80, 0x4049); // 1, 3.140625
    const f64 = Float64Array.of(0.1);
    const data = new Uint8Array(8 + 4 + 8);
    data.set(new Uint8Array(f16.buffer), 0);
    data.set(new Uint8Array(bf16.buffer), 8);
    data.set(new Uint8Array(f64.buffer), 12);
    const { tensors } = decodeSafetensors(
      rawFile(
        {
          h: { dtype: 'F16', shape: [4], data_offsets: [0, 8] },
          b: { dtype: 'BF16', shape: [2], data_offsets: [8, 12] },
          d: { dtype: 'F64', shape: [1], data_offsets: [12, 20] },
        },
        data,
      ),
    );
    expect(Array.from(tensors.get('h')?.data ?? [])).toEqual([1, -2, 2 ** -24, Infinity]);
    expect(Array.from(tensors.get('b')?.data ?? [])).toEqual([1, 3.140625]);
    expect(tensors.get('d')?.data[0]).toBe(Math.fround(0.1));
    expect(tensors.get('d')?.dtype).toBe('F64');
  });

  it('decodes from a Node Buffer (readFileSync) without reading past each tensor', () => {
    // Buffer#slice is a view, not a copy: decoding once took the whole file's bytes as one tensor
    // (bench:inference crashed with "expected 33408 values, got 558938" on tiny-chat's weights).
    const a = Float32Array.from({ length: 6 }, (_, i) => i + 0.5);
    const b = Float32Array.of(-1, 2);
    const bytes = encodeSafetensors([
      { name: 'a', shape: [2, 3], data: a },
      { name: 'b', shape: [2], data: b },
    ]);
    const { tensors } = decodeSafetensors(Buffer.from(bytes));
    expect(tensors.get('a')!.data).toEqual(a);
    expect(tensors.get('b')!.data).toEqual(b);
  });

  it('rejects malformed files', () => {
    const d8 = new Uint8Array(8);
    expect(() => decodeSafetensors(new Uint8Array(4))).toThrow(/shorter/);
    expect(() => decodeSafetensors(rawFile({ a: { dtype: 'I8', shape: [8], data_offsets: [0, 8] } }, d8))).toThrow(
      /unsupported dtype/,
    );
    expect(() => decodeSafetensors(rawFile({ a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, d8))).toThrow(
      /do not match/,
    );
    expect(() =>
      decodeSafetensors(
        rawFile(
          {
            a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] },
            b: { dtype: 'F32', shape: [1], data_offsets: [0, 4] },
          },
          d8,
        ),
      ),
    ).toThrow(/overlaps/);
    expect(() => decodeSafetensors(rawFile({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, d8))).toThrow(
      /trailing/,
    );
    const bad = rawFile({}, d8);
    new DataView(bad.buffer).setBigUint64(0, 1n << 40n, true);
    expect(() => decodeSafetensors(bad)).toThrow(/header length/);
    expect(() => encodeSafetensors([{ name: 'x', shape: [2], data: new Float32Array(3) }])).toThrow(/3 values/);
  });

  it('round-trips a model with its config, HF Llama names and identical logits', () => {
    const config: ModelConfig = {
      vocab: 20,
      d_model: 16,
      n_layers: 2,
      n_heads: 2,
      n_kv_heads: 1,
      d_ff: 24,
      ctx: 16,
      rope_theta: 10000,
      norm_eps: 1e-6,
      tie_embeddings: true,
    };
    const model = Model.create(config, { seed: 9 });
    const bytes = encodeModel(model, { step: '3' });
    const { tensors, metadata } = decodeSafetensors(bytes);
    expect(metadata.format).toBe('pt');
    expect(metadata.step).toBe('3');
    expect(JSON.parse(metadata[CONFIG_METADATA_KEY])).toEqual(config);
    expect(tensors.get('model.layers.1.self_attn.k_proj.weight')?.shape).toEqual([8, 16]);
    expect(tensors.has('lm_head.weight')).toBe(false); // tied, as HF omits it
    const copy = decodeModel(bytes);
    expect(copy.forward([{ tokens: [1, 2, 3] }])[0]).toEqual(model.forward([{ tokens: [1, 2, 3] }])[0]);
    expect(() => decodeModel(encodeSafetensors([]))).toThrow(/no model config/);
    model.release();
    copy.release();
  });
});
