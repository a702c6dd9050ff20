import 'server-only';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { packFiles } from '@/lib/engine/hf/bundle';
import { eosIds, parseHfConfig } from '@/lib/engine/hf/config';
import { HfTokenizer } from '@/lib/engine/hf/tokenizer';
import type { BuiltinModelDescription } from '@/lib/inference/backends';
import { generationDefaults } from '@/lib/inference/chat-request';

/**
 * Serving `hf` base models on the built-in engine, the half that reads their folders (their checkpoints, read from
 * the artifact store, are lib/services/hf-models.ts's): everything comes from the model directory — config.json (architecture, context length), tokenizer.json + tokenizer_config.json
 * (tokenizer, chat template, end-of-turn token), generation_config.json (stop ids), *.safetensors. The
 * server thread keeps the tokenizer; the inference threads get the whole directory as one bundle and share
 * one copy of the base weights between all checkpoints.
 */

const SMALL_FILES = [
  'config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'generation_config.json',
  'chat_template.jinja',
];

/** Why the built-in engine cannot serve this directory, or null when it can (checked without reading weights). */
export function hfDirProblem(dir: string | undefined): string | null {
  const problem = dirProblem(dir);
  return problem && `the built-in engine cannot serve it: ${problem}`;
}

function dirProblem(dir: string | undefined): string | null {
  if (!dir) return 'it has no local model directory (`path`)';
  if (!fs.existsSync(dir)) return `its model directory ${path.basename(dir)} does not exist on this server`;
  for (const f of ['config.json', 'tokenizer.json']) {
    if (!fs.existsSync(path.join(/*turbopackIgnore: true*/ dir, f))) return `its model directory lacks ${f}`;
  }
  if (!fs.readdirSync(dir).some((f) => f.endsWith('.safetensors')))
    return 'its model directory has no .safetensors weights';
  try {
    parseHfConfig(JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')));
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return null;
}

const descriptions = new Map<string, { mtimeMs: number; description: BuiltinModelDescription }>();

function readJson(dir: string, name: string): unknown {
  const file = path.join(dir, name);
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** The directory's small files (config, tokenizer, generation config, template), by name. */
export async function hfSmallFiles(dir: string): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  for (const name of SMALL_FILES) {
    const file = path.join(/*turbopackIgnore: true*/ dir, name);
    if (fs.existsSync(file)) files.set(name, await fsp.readFile(file));
  }
  return files;
}

async function bundleDirectory(dir: string): Promise<Uint8Array> {
  const files = await hfSmallFiles(dir);
  for (const name of (await fsp.readdir(dir)).filter((f) => f.endsWith('.safetensors')).sort()) {
    files.set(name, await fsp.readFile(path.join(/*turbopackIgnore: true*/ dir, name)));
  }
  return packFiles(files);
}

/**
 * The context the built-in engine serves: config.json's, capped so that one sequence's KV cache (allocated
 * whole for prompt + max_tokens, which defaults to the rest of the context) takes at most 1 GiB of the
 * thread's 4 GiB wasm heap, in steps of 1024. Qwen3-0.6B: 40960 → 4096; the tiny test models keep theirs.
 */
export function servedContextLength(c: { ctx: number; layers: number; kvHeads: number; headDim: number }): number {
  const perToken = c.layers * c.kvHeads * c.headDim * 2 * 4;
  const cap = Math.max(1024, Math.floor(2 ** 30 / perToken / 1024) * 1024);
  return Math.min(c.ctx, cap);
}

/** The built-in engine's description of an `hf` base model (cached per directory until config.json changes). */
export function hfBaseDescription(id: string, dir: string): BuiltinModelDescription {
  const mtimeMs = fs.statSync(path.join(dir, 'config.json')).mtimeMs;
  const cached = descriptions.get(dir);
  if (cached && cached.mtimeMs === mtimeMs) return cached.description;
  const config = parseHfConfig(readJson(dir, 'config.json'));
  const tokenizerConfig = (readJson(dir, 'tokenizer_config.json') ?? {}) as Record<string, unknown>;
  // transformers ≥ 4.43 may store the template beside tokenizer_config.json.
  const jinja = path.join(dir, 'chat_template.jinja');
  if (typeof tokenizerConfig.chat_template !== 'string' && fs.existsSync(jinja)) {
    tokenizerConfig.chat_template = fs.readFileSync(jinja, 'utf8');
  }
  const tokenizer = new HfTokenizer(readJson(dir, 'tokenizer.json'), tokenizerConfig, config.vocab);
  const generationConfig = readJson(dir, 'generation_config.json');
  let stop = eosIds(generationConfig);
  if (stop.length === 0) stop = config.eosTokenIds;
  const key = `hf:${id}`;
  const description: BuiltinModelDescription = {
    model: { key, source: { kind: 'hf', baseKey: key, adapter: false }, tokenizer: { kind: 'hf' } },
    loadWeights: () => bundleDirectory(dir),
    chatTemplate: tokenizer.chatTemplate ?? '',
    chatEosToken: tokenizer.eosToken ?? '',
    contextLength: servedContextLength(config),
    hf: {
      tokenizer,
      stopTokenIds: stop.filter((x) => x >= 0 && x < config.vocab),
      generation: generationDefaults(generationConfig),
    },
  };
  descriptions.set(dir, { mtimeMs, description });
  return description;
}
