import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { allBaseModels } from './base-models';

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
