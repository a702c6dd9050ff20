import { describe, expect, it, vi } from 'vitest';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import * as queue from '@/lib/jobs/server/queue';
import { createModel, createRlJob, createUser } from '../support/helpers';
import { claimOnly } from './claim-only';

/*
 * Issue 41: a cancel is the user's decision, not a fault. The worker logs one info line without a stack trace,
 * also when the server refuses its next step (409) before a heartbeat has said "cancelled". It mocks the logger, so
 * it runs in a process of its own (ISOLATED_FILES in vitest.config.mts).
 */

const lines: { level: string; obj: unknown; msg: unknown }[] = [];
vi.mock('@/lib/logger', async (importOriginal) => {
  const real = await importOriginal<typeof import('@/lib/logger')>();
  const record = (level: string) => (obj: unknown, msg?: unknown) => void lines.push({ level, obj, msg });
  return {
    ...real,
    componentLogger: (component: string) =>
      component === 'worker'
        ? { info: record('info'), warn: record('warn'), error: record('error'), debug: record('debug') }
        : real.componentLogger(component),
  };
});

describe('a cancelled job on the worker', () => {
  it('logs one info line, no error and no stack, when the server refuses the step after a cancel', async () => {
    const { runOneJob } = await import('@/lib/jobs/worker/runner');
    const user = await createUser();
    const model = await createModel(user);
    const jobId = await createRlJob(user, model.id);
    const protocol = claimOnly(inProcessProtocol(`test:${model.id}`), model.id);
    const fail = vi.spyOn(protocol, 'fail');
    lines.length = 0;
    const ran = await runOneJob(
      protocol,
      {
        rl: async (ctx) => {
          await ctx.started(3);
          await ctx.step({ loss: 1 });
          await queue.cancelJob(jobId);
          // No heartbeat in between (it beats every minute here): the server answers this step with 409.
          await ctx.step({ loss: 2 });
          return { weights: new Uint8Array([1]) };
        },
      },
      { heartbeatMs: 60_000 },
    );
    expect(ran).toBe(true);
    expect(lines.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
    expect(lines).toEqual([{ level: 'info', obj: { jobId }, msg: 'job cancelled or taken away; stopped' }]);
    // Nothing more is reported: the server already ended the job with its cancel.
    expect(fail).not.toHaveBeenCalled();
  });
});
