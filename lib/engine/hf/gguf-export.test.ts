import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FsTensorSource } from '@/lib/export/fs-tensor-source';
import { tinyQwen3Adapter, writeTinyQwen3 } from '../../../tests/support/tiny-hf-model';
import { GGML_TYPE, GGUF_TOKEN_TYPE, readGguf } from '../gguf';
import { decodeSafetensors } from '../safetensors';
import { exportHfGgufBytes, GgufExportRefused, hfGgufExport, memorySource, type HfGgufInput } from './gguf-export';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-hf-gguf-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const model = writeTinyQwen3(path.join(tmp, 'qwen3'));
const shardFiles = fs
  .readdirSync(model.dir)
  .filter((f) => f.endsWith('.safetensors'))
  .map((f) => fs.readFileSync(path.join(model.dir, f)));
const base = new Map<string, Float32Array>();
for (const shard of shardFiles) for (const [n, t] of decodeSafetensors(shard).tensors) base.set(n, t.data);
const readJson = (f: string) => JSON.parse(fs.readFileSync(path.join(model.dir, f), 'utf8'));
const tokenizer = { json: readJson('tokenizer.json'), config: readJson('tokenizer_config.json') };

/** |got − want| within F16 rounding of want (half an ulp at 11 bits, plus the subnormal step). */
function expectF16Close(got: Float32Array, want: Float64Array | Float32Array) {
  expect(got.length).toBe(want.length);
  let worst = 0;
  for (let i = 0; i < got.length; i++) {
    worst = Math.max(worst, Math.abs(got[i] - want[i]) - (Math.abs(want[i]) * 2 ** -11 + 2 ** -24));
  }
  expect(worst).toBeLessThanOrEqual(0);
}

/** W + scale·B·A, computed plainly in float64. */
function merged(w: Float32Array, a: Float32Array, b: Float32Array, r: number, scale: number): Float64Array {
  const K = a.length / r;
  const N = b.length / r;
  const out = Float64Array.from(w);
  for (let n = 0; n < N; n++)
    for (let k = 0; k < K; k++) {
      let s = 0;
      for (let j = 0; j < r; j++) s += b[n * r + j] * a[j * K + k];
      out[n * K + k] += scale * s;
    }
  return out;
}

describe('Hugging Face checkpoint → GGUF', () => {
  it('merges W + scale·B·A (rsLoRA: alpha/√r) into every adapted projection, and the tied head into output.weight only', () => {
    const adapter = tinyQwen3Adapter(model, { rank: 4, alpha: 6, rslora: true, head: true });
    const factors = decodeSafetensors(adapter.weights).tensors;
    const file = readGguf(
      exportHfGgufBytes(
        {
          config: model.config,
          adapter: { config: JSON.parse(new TextDecoder().decode(adapter.config)), weights: adapter.weights },
          matrixType: 'F16',
        },
        memorySource(shardFiles),
      ),
    );
    const scale = 6 / Math.sqrt(4);
    const lora = (p: string) => ({
      a: factors.get(`base_model.model.${p}.lora_A.weight`)!.data,
      b: factors.get(`base_model.model.${p}.lora_B.weight`)!.data,
    });
    const cases: Array<[string, string]> = [
      ['blk.0.attn_q.weight', 'model.layers.0.self_attn.q_proj'],
      ['blk.1.attn_k.weight', 'model.layers.1.self_attn.k_proj'],
      ['blk.1.attn_output.weight', 'model.layers.1.self_attn.o_proj'],
      ['blk.0.ffn_down.weight', 'model.layers.0.mlp.down_proj'],
    ];
    for (const [gguf, hf] of cases) {
      const { a, b } = lora(hf);
      const want = merged(base.get(`${hf}.weight`)!, a, b, 4, scale);
      const got = file.tensorData(gguf);
      expectF16Close(got, want);
      // The delta is far above F16 rounding: an unmerged export would fail the comparison above.
      let delta = 0;
      for (let i = 0; i < want.length; i++) delta = Math.max(delta, Math.abs(want[i] - base.get(`${hf}.weight`)![i]));
      expect(delta).toBeGreaterThan(0.05);
    }
    // Tied embeddings with an adapted head: the input embedding stays the base's, output.weight is E + delta.
    const embed = base.get('model.embed_tokens.weight')!;
    expectF16Close(file.tensorData('token_embd.weight'), embed);
    const head = lora('lm_head');
    expectF16Close(file.tensorData('output.weight'), merged(embed, head.a, head.b, 4, scale));
    expect(file.tensors.find((t) => t.name === 'blk.0.attn_norm.weight')?.type).toBe(GGML_TYPE.F32);
    expect(file.tensorData('blk.1.attn_q_norm.weight')).toEqual(base.get('model.layers.1.self_attn.q_norm.weight'));
  });

  it('plain scale alpha/r, and no output.weight when the head is neither untied nor adapted', () => {
    const adapter = tinyQwen3Adapter(model, { rank: 8, alpha: 16 });
    const factors = decodeSafetensors(adapter.weights).tensors;
    const file = readGguf(
      exportHfGgufBytes(
        {
          config: model.config,
          adapter: { config: JSON.parse(new TextDecoder().decode(adapter.config)), weights: adapter.weights },
          matrixType: 'F16',
        },
        memorySource(shardFiles),
      ),
    );
    const p = 'base_model.model.model.layers.1.mlp.up_proj';
    const want = merged(
      base.get('model.layers.1.mlp.up_proj.weight')!,
      factors.get(`${p}.lora_A.weight`)!.data,
      factors.get(`${p}.lora_B.weight`)!.data,
      8,
      2,
    );
    expectF16Close(file.tensorData('blk.1.ffn_up.weight'), want);
    expect(file.tensors.map((t) => t.name)).not.toContain('output.weight');
  });

  it('writes the real Qwen3 tokenizer as convert_hf_to_gguf does, and the chat template', () => {
    const m = readGguf(
      exportHfGgufBytes({ config: model.config, tokenizer, matrixType: 'Q8_0' }, memorySource(shardFiles)),
    ).metadata;
    const vocab = tokenizer.json.model.vocab as Record<string, number>;
    const tokens = m.get('tokenizer.ggml.tokens') as string[];
    const types = m.get('tokenizer.ggml.token_type') as number[];
    expect(tokens).toHaveLength(model.vocab);
    for (const text of ['Ġthe', 'ä¸Ńæĸĩ', 'Ċ', '!']) expect(tokens[vocab[text]]).toBe(text); // byte-level spellings
    expect(types[vocab['Ġthe']]).toBe(GGUF_TOKEN_TYPE.NORMAL);
    const id = (t: string) => tokens.indexOf(t);
    expect(id('<|im_end|>')).toBe(151645);
    expect(types[id('<|im_end|>')]).toBe(GGUF_TOKEN_TYPE.CONTROL);
    expect(types[id('<|fim_prefix|>')]).toBe(GGUF_TOKEN_TYPE.CONTROL); // not special, but looks it
    expect(types[id('<think>')]).toBe(GGUF_TOKEN_TYPE.USER_DEFINED);
    expect(types[id('</tool_call>')]).toBe(GGUF_TOKEN_TYPE.USER_DEFINED);
    const merges = m.get('tokenizer.ggml.merges') as string[];
    expect(merges).toHaveLength(tokenizer.json.model.merges.length);
    expect(merges[0]).toBe('Ġ Ġ');
    expect(m.get('tokenizer.ggml.model')).toBe('gpt2');
    expect(m.get('tokenizer.ggml.pre')).toBe('qwen2');
    expect(m.get('tokenizer.ggml.bos_token_id')).toBe(151643); // config.json's: tokenizer_config has no bos_token
    expect(m.get('tokenizer.ggml.eos_token_id')).toBe(151645);
    expect(m.get('tokenizer.ggml.padding_token_id')).toBeUndefined();
    expect(m.get('tokenizer.ggml.pad_token_id')).toBe(151643);
    expect(m.get('tokenizer.ggml.add_bos_token')).toBe(false);
    expect(m.get('tokenizer.chat_template')).toBe(tokenizer.config.chat_template);
    expect(m.get('general.architecture')).toBe('qwen3');
    expect(m.get('general.file_type')).toBe(7);
    expect(m.get('qwen3.attention.key_length')).toBe(32);
  });

  it('streams from the files a block at a time with the same bytes as from memory', () => {
    const adapter = tinyQwen3Adapter(model, { head: true });
    const input: HfGgufInput = {
      config: model.config,
      tokenizer,
      adapter: { config: JSON.parse(new TextDecoder().decode(adapter.config)), weights: adapter.weights },
      matrixType: 'Q8_0',
    };
    const source = new FsTensorSource(model.dir);
    try {
      const e = hfGgufExport(input, source);
      let size = 0;
      let largest = 0;
      const parts: Uint8Array[] = [];
      for (const c of e.chunks()) {
        parts.push(c);
        size += c.length;
        if (parts.length > 1) largest = Math.max(largest, c.length);
      }
      expect(size).toBe(e.size);
      // The 151669 × 64 embedding comes in blocks, never as one array.
      expect(largest).toBeLessThanOrEqual(((1 << 20) / 32) * 34);
      expect(Buffer.concat(parts).equals(Buffer.from(exportHfGgufBytes(input, memorySource(shardFiles))))).toBe(true);
    } finally {
      source.close();
    }
  });

  it('refuses what llama.cpp would run differently, naming why', () => {
    const refused = (input: Partial<HfGgufInput>) => {
      try {
        hfGgufExport({ config: model.config, matrixType: 'F16', ...input }, memorySource(shardFiles));
      } catch (err) {
        expect(err).toBeInstanceOf(GgufExportRefused);
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    const rope = {
      rope_type: 'llama3',
      factor: 8,
      low_freq_factor: 1,
      high_freq_factor: 4,
      original_max_position_embeddings: 128,
    };
    expect(refused({ config: { ...model.config, rope_scaling: rope } })).toMatch(/llama3 rope scaling/);
    expect(refused({ config: { ...model.config, model_type: 'gemma' } })).toMatch(
      /model_type "gemma" is not supported/,
    );
    const dora = tinyQwen3Adapter(model, { extra: { use_dora: true } });
    expect(
      refused({ adapter: { config: JSON.parse(new TextDecoder().decode(dora.config)), weights: dora.weights } }),
    ).toMatch(/adapter cannot be merged: .*DoRA/);
    const gpt2Pre = { ...tokenizer.json, pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false } };
    expect(refused({ tokenizer: { json: gpt2Pre, config: tokenizer.config } })).toMatch(/pre-tokenizer/);
  });
});
