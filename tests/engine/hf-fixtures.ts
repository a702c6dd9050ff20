// Test and benchmark helper (not engine runtime): builds the reference fixtures of
// scripts/make-hf-engine-fixtures.py with whatever Python has torch, transformers, peft and tokenizers.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'make-hf-engine-fixtures.py');
const REQUIRED = 'import torch, transformers, peft, tokenizers, safetensors';

/**
 * A Python that can import the reference libraries: TUNEBOARD_PYTHON first (CI points it at its venv),
 * then python3 and python on PATH. Returns the reason when none can, for the tests to skip on a machine without
 * one; but a TUNEBOARD_PYTHON that cannot import them, or none at all in CI (which installs them), is a broken
 * install and throws, so that the comparisons fail instead of skipping while CI stays green.
 */
export function findReferencePython(): { python: string } | { reason: string } {
  const configured = process.env.TUNEBOARD_PYTHON;
  const candidates = [configured, 'python3', 'python'].filter((p): p is string => !!p);
  const tried: string[] = [];
  for (const python of candidates) {
    const r = spawnSync(python, ['-c', REQUIRED], { encoding: 'utf8', timeout: 120_000 });
    if (r.status === 0) return { python };
    tried.push(`${python}: ${r.error ? r.error.message : (r.stderr || '').trim().split('\n').pop()}`);
    if (python === configured) throw new Error(`TUNEBOARD_PYTHON cannot import the reference libraries: ${tried[0]}`);
  }
  const reason = `no Python with torch, transformers, peft and tokenizers (set TUNEBOARD_PYTHON); tried ${tried.join('; ')}`;
  if (process.env.CI) throw new Error(`${reason}; CI installs one (.venv-worker), so this is a failure`);
  return { reason };
}

/**
 * The fixture directory, generated once per script version into the OS temp folder (one Python process
 * writes every model, adapter and reference output).
 */
export function hfFixtures(python: string): string {
  const hash = createHash('sha256')
    .update(readFileSync(SCRIPT))
    .update(readFileSync(path.join(ROOT, 'scripts', 'make-tiny-hf-model.py')))
    .digest('hex')
    .slice(0, 12);
  const dir = path.join(os.tmpdir(), `tuneboard-hf-fixtures-${hash}`);
  if (existsSync(path.join(dir, 'reference.json'))) return dir;
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const r = spawnSync(python, [SCRIPT, '--out', tmp], { encoding: 'utf8', timeout: 600_000, cwd: ROOT });
  if (r.status !== 0) throw new Error(`fixture script failed (${r.status}): ${r.stderr}\n${r.error ?? ''}`);
  try {
    renameSync(tmp, dir);
  } catch {
    // Another process finished first: use its copy.
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}
