import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A Python interpreter that can `import torch`, for the PyTorch anchor of bench:train: the one named by
 * TUNEBOARD_BENCH_PYTHON, else the active virtual environment's, else `python3` / `python` on PATH, else
 * Debian's /usr/bin/python3 (python3-torch). The first that imports torch wins; null when none does.
 */
export function findTorchPython(
  env: { explicit?: string; virtualEnv?: string; pathVar?: string } = {},
): { python: string; version: string } | null {
  const candidates: string[] = [];
  if (env.explicit) candidates.push(env.explicit);
  if (env.virtualEnv) candidates.push(path.join(env.virtualEnv, 'bin', 'python'));
  for (const dir of (env.pathVar ?? '').split(path.delimiter).filter(Boolean)) {
    for (const name of ['python3', 'python']) candidates.push(path.join(dir, name));
  }
  candidates.push('/usr/bin/python3');
  for (const python of [...new Set(candidates)]) {
    if (!fs.existsSync(python)) continue;
    const res = spawnSync(python, ['-c', 'import torch; print(torch.__version__)'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (res.status === 0) return { python, version: res.stdout.trim() };
  }
  return null;
}
