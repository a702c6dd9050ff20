import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as datasetsRoute from '@/app/v1/preview/datasets/route';
import * as modelRoute from '@/app/v1/preview/models/[model_id]/route';
import * as jobRoute from '@/app/v1/preview/training-jobs/[training_job_id]/route';
import * as eventsRoute from '@/app/v1/preview/training-jobs/[training_job_id]/events/route';
import { config } from '@/lib/config';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import { runOneJob } from '@/lib/jobs/worker/runner';
import { putArtifact } from '@/lib/storage';
import { startArtifactSweeper, sweepOrphanArtifacts } from '@/lib/services/artifact-sweep';
import { call, createModel, createRlJob, createUser, until } from '../support/helpers';
import { claimOnly } from '../jobs/claim-only';

const fault = (code: string) => Object.assign(new Error(`${code}: simulated`), { code });

afterEach(() => vi.restoreAllMocks());

describe('storage faults', () => {
  it('a job on a read-only store fails before training, saying why', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await createRlJob(user, model.id);
    vi.spyOn(fsp, 'writeFile').mockRejectedValue(fault('EROFS'));
    const trained = vi.fn();
    await runOneJob(claimOnly(inProcessProtocol(`t:${model.id}`), model.id), {
      rl: async () => (trained(), { weights: new Uint8Array([1]) }),
    });
    expect(trained).not.toHaveBeenCalled();
    const job = (await call(jobRoute, 'GET', '/x', { key: user.key, params: { training_job_id: jobId } })).body;
    expect(job.status).toBe('FAILED');
    expect(job.error_message).toMatch(/artifact store is read-only/);
    const events = (await call(eventsRoute, 'GET', '/x', { key: user.key, params: { training_job_id: jobId } })).body
      .data;
    expect(events.map((e: { type: string }) => e.type)).toEqual(['training_failed']);
  });

  it('an upload to a full store answers a clear 503, not a bare 500', async () => {
    const user = await createUser();
    vi.spyOn(fs, 'createWriteStream').mockImplementation(() => {
      throw fault('ENOSPC');
    });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const res = await datasetsRoute.POST(
      new Request('http://localhost:3000/v1/preview/datasets?project=p&name=d', {
        method: 'POST',
        body: '{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}\n',
        headers: { authorization: `Bearer ${user.key}` },
      }),
      { params: Promise.resolve({}) },
    );
    errors.mockRestore();
    expect(res.status).toBe(503);
    expect((await res.json()).detail).toMatch(/artifact store is full/);
  });

  it('deleting a model whose files cannot be removed still answers, and the sweep removes them later', async () => {
    const user = await createUser();
    const model = await createModel(user);
    await putArtifact(`models/${model.id}/checkpoints/x/model.safetensors`, new Uint8Array([1, 2]));
    const rm = vi.spyOn(fsp, 'rm').mockRejectedValueOnce(fault('EROFS'));
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const res = await call(modelRoute, 'DELETE', '/x', { key: user.key, params: { model_id: model.id } });
    expect(res.status).toBe(200);
    expect(rm).toHaveBeenCalled();
    errors.mockRestore();
    const dir = path.join(config.artifactDir, 'models', model.id);
    expect(fs.existsSync(dir)).toBe(true);
    await sweepOrphanArtifacts({ minAgeMs: 0 });
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('the sweep removes temporary files left by a crash and dataset folders no version points to', async () => {
    const stray = path.join(config.artifactDir, 'datasets', '00000000-0000-4000-8000-00000000dead');
    fs.mkdirSync(stray, { recursive: true });
    fs.writeFileSync(path.join(stray, 'train.jsonl'), '{}\n');
    const user = await createUser();
    const model = await createModel(user);
    const kept = path.join(config.artifactDir, 'models', model.id, 'checkpoints', 'j');
    fs.mkdirSync(kept, { recursive: true });
    fs.writeFileSync(path.join(kept, 'model.safetensors.tmp-abc'), 'partial');
    fs.writeFileSync(path.join(kept, 'model.safetensors'), 'whole');
    await sweepOrphanArtifacts({ minAgeMs: 0 });
    expect(fs.existsSync(stray)).toBe(false);
    expect(fs.existsSync(path.join(kept, 'model.safetensors.tmp-abc'))).toBe(false);
    // A live model's files stay (checkpoint files of running jobs are written before their row exists).
    expect(fs.existsSync(path.join(kept, 'model.safetensors'))).toBe(true);
  });

  it('a running server sweeps an abandoned partial upload without a restart, and leaves one still being written', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const dir = path.join(config.artifactDir, 'models', model.id, 'checkpoints', 'k');
    fs.mkdirSync(dir, { recursive: true });
    const abandoned = path.join(dir, 'adapter_model.safetensors.tmp-dead');
    const live = path.join(dir, 'adapter_model.safetensors.tmp-live');
    fs.writeFileSync(abandoned, 'partial');
    // Its last byte arrived 20 minutes ago: the upload died (a crash, a client gone).
    const past = new Date(Date.now() - 20 * 60_000);
    fs.utimesSync(abandoned, past, past);
    fs.writeFileSync(live, 'arriving');
    // The first pass runs at start; later ones on the interval (here 50 ms instead of minutes).
    const stop = startArtifactSweeper({ intervalMs: 50, tempMinAgeMs: 10 * 60_000 });
    try {
      expect(await until(async () => !fs.existsSync(abandoned), 10_000)).toBe(true);
      // A second abandoned file, left after the first pass, goes on a later one.
      const later = path.join(dir, 'more.tmp-dead');
      fs.writeFileSync(later, 'partial');
      fs.utimesSync(later, past, past);
      expect(await until(async () => !fs.existsSync(later), 10_000)).toBe(true);
      expect(fs.existsSync(live)).toBe(true);
    } finally {
      stop();
    }
  });
});
