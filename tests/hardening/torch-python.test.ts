import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findTorchPython } from '@/bench/torch-python';

/** A fake interpreter: answers `import torch` with a version, or fails as a Python without torch would. */
function fakePython(dir: string, name: string, hasTorch: boolean): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    hasTorch ? '#!/bin/sh\necho 9.9.9\n' : '#!/bin/sh\necho "No module named torch" >&2; exit 1\n',
  );
  fs.chmodSync(file, 0o755);
  return file;
}

describe('bench:train finds PyTorch in any Python on the machine', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'torch-python-'));

  it('takes the first python on PATH that imports torch', () => {
    const without = path.join(root, 'a');
    const withTorch = path.join(root, 'b');
    fakePython(without, 'python3', false);
    const good = fakePython(withTorch, 'python3', true);
    expect(findTorchPython({ pathVar: [without, withTorch].join(path.delimiter) })).toEqual({
      python: good,
      version: '9.9.9',
    });
  });

  it('prefers the interpreter named by the environment, then the active virtual environment', () => {
    const explicit = fakePython(path.join(root, 'explicit'), 'py', true);
    const venvPython = fakePython(path.join(root, 'venv', 'bin'), 'python', true);
    const onPath = path.join(root, 'path');
    fakePython(onPath, 'python3', true);
    expect(findTorchPython({ explicit, virtualEnv: path.join(root, 'venv'), pathVar: onPath })?.python).toBe(explicit);
    expect(findTorchPython({ virtualEnv: path.join(root, 'venv'), pathVar: onPath })?.python).toBe(venvPython);
  });
});
