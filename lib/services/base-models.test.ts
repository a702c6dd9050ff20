import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { allBaseModels } from '@/lib/catalog/base-models';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-base-models-reload-'));
const before = process.env.TUNEBOARD_BASE_MODELS_FILE;

function writeModels(file: string, ids: string[], mtimeS: number) {
  fs.writeFileSync(file, JSON.stringify({ models: ids.map((id) => ({ id, backend: 'upstream' })) }));
  fs.utimesSync(file, mtimeS, mtimeS);
}

afterEach(() => {
  vi.restoreAllMocks();
  process.env.TUNEBOARD_BASE_MODELS_FILE = before;
});

describe('the base-models file', () => {
  it('shows an edit within a second, without a restart', () => {
    let now = 1_000_000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const file = path.join(dir, 'edited.json');
    writeModels(file, ['org/first'], 1_700_000_000);
    process.env.TUNEBOARD_BASE_MODELS_FILE = file;
    expect(allBaseModels().map((m) => m.id)).toEqual(['org/first']);

    writeModels(file, ['org/first', 'org/second'], 1_700_000_100);
    now += 1001;
    expect(allBaseModels().map((m) => m.id)).toEqual(['org/first', 'org/second']);
  });

  it('reads another file as soon as the setting names it', () => {
    vi.spyOn(performance, 'now').mockReturnValue(5_000_000);
    const a = path.join(dir, 'a.json');
    const b = path.join(dir, 'b.json');
    writeModels(a, ['org/a'], 1_700_000_000);
    writeModels(b, ['org/b'], 1_700_000_000);
    process.env.TUNEBOARD_BASE_MODELS_FILE = a;
    expect(allBaseModels().map((m) => m.id)).toEqual(['org/a']);
    process.env.TUNEBOARD_BASE_MODELS_FILE = b;
    expect(allBaseModels().map((m) => m.id)).toEqual(['org/b']);
  });
});

describe('TUNEBOARD_BASE_MODELS_DIR', () => {
  const saved = process.env.TUNEBOARD_BASE_MODELS_DIR;
  afterEach(() => {
    if (saved === undefined) delete process.env.TUNEBOARD_BASE_MODELS_DIR;
    else process.env.TUNEBOARD_BASE_MODELS_DIR = saved;
  });

  it("resolves Hugging Face folders, while the built-in models' shipped weights stay available", async () => {
    const { servingStatus, hfModelDir } = await import('./base-models');
    process.env.TUNEBOARD_BASE_MODELS_DIR = dir;
    // As the docs suggest for Hugging Face models: this once made tuneboard/tiny-chat unavailable ("its weights
    // file has not been built yet").
    expect(servingStatus({ id: 'tuneboard/tiny-chat', backend: 'builtin' })).toEqual({ available: true });
    expect(hfModelDir({ id: 'org/m', backend: 'hf', path: 'qwen' })).toBe(path.join(dir, 'qwen'));
  });
});

describe('reasoning_parser', () => {
  const entry = (extra: Record<string, unknown>) => JSON.stringify({ models: [{ id: 'org/q', ...extra }] });

  it("accepts vLLM's qwen3 and deepseek_r1 on a Hugging Face model the built-in engine serves", async () => {
    const { parseBaseModelsFile } = await import('@/lib/catalog/base-models');
    for (const name of ['qwen3', 'deepseek_r1']) {
      expect(parseBaseModelsFile('f.json', entry({ backend: 'hf', reasoning_parser: name }))[0].reasoning_parser).toBe(
        name,
      );
    }
  });

  it('refuses an unknown name, and models it would not apply to, naming the file and the field', async () => {
    const { parseBaseModelsFile } = await import('@/lib/catalog/base-models');
    expect(() => parseBaseModelsFile('f.json', entry({ backend: 'hf', reasoning_parser: 'qwen' }))).toThrow(
      'The base-models file f.json is invalid: models.0.reasoning_parser: unknown reasoning_parser "qwen"; the built-in engine has vLLM\'s "qwen3" and "deepseek_r1"',
    );
    expect(() => parseBaseModelsFile('f.json', entry({ backend: 'upstream', reasoning_parser: 'qwen3' }))).toThrow(
      /models\.0\.reasoning_parser: .*its own --reasoning-parser/,
    );
    expect(() =>
      parseBaseModelsFile('f.json', entry({ backend: 'hf', serve: 'vllm', reasoning_parser: 'qwen3' })),
    ).toThrow(/its own --reasoning-parser/);
    expect(() => parseBaseModelsFile('f.json', entry({ backend: 'builtin', reasoning_parser: 'qwen3' }))).toThrow(
      /no <think> token/,
    );
  });
});

describe('engine, dtype and slots (a Hugging Face base on llama.cpp)', () => {
  const entry = (extra: Record<string, unknown>) => JSON.stringify({ models: [{ id: 'org/q', ...extra }] });

  it('accepts llama.cpp with f16 or q8_0 and a slot count on a model the built-in engine serves', async () => {
    const { parseBaseModelsFile } = await import('@/lib/catalog/base-models');
    for (const dtype of ['f16', 'q8_0']) {
      const [m] = parseBaseModelsFile('f.json', entry({ backend: 'hf', engine: 'llama.cpp', dtype, slots: 2 }));
      expect([m.engine, m.dtype, m.slots]).toEqual(['llama.cpp', dtype, 2]);
    }
    expect(parseBaseModelsFile('f.json', entry({ backend: 'hf', engine: 'wasm' }))[0].engine).toBe('wasm');
  });

  it('refuses unknown values and fields that would be ignored, naming the file and the field', async () => {
    const { parseBaseModelsFile } = await import('@/lib/catalog/base-models');
    expect(() => parseBaseModelsFile('f.json', entry({ backend: 'hf', engine: 'llamacpp' }))).toThrow(
      'The base-models file f.json is invalid: models.0.engine: unknown engine "llamacpp"; the built-in engine serves with "wasm" or "llama.cpp"',
    );
    expect(() => parseBaseModelsFile('f.json', entry({ backend: 'hf', engine: 'llama.cpp', dtype: 'q4_0' }))).toThrow(
      'models.0.dtype: unknown dtype "q4_0"; llama.cpp serves "f16" or "q8_0"',
    );
    expect(() => parseBaseModelsFile('f.json', entry({ backend: 'hf', engine: 'llama.cpp', slots: 0 }))).toThrow(
      /models\.0\.slots: /,
    );
    expect(() => parseBaseModelsFile('f.json', entry({ backend: 'hf', dtype: 'q8_0' }))).toThrow(
      'models.0.dtype: dtype applies to "engine": "llama.cpp" only',
    );
    expect(() => parseBaseModelsFile('f.json', entry({ backend: 'hf', engine: 'wasm', slots: 2 }))).toThrow(
      'models.0.slots: slots applies to "engine": "llama.cpp" only',
    );
    for (const other of [{ backend: 'upstream' }, { backend: 'builtin' }, { backend: 'hf', serve: 'vllm' }]) {
      expect(() => parseBaseModelsFile('f.json', entry({ ...other, engine: 'llama.cpp' }))).toThrow(
        'models.0.engine: engine applies to Hugging Face models (backend "hf") that the built-in engine serves',
      );
    }
  });
});
