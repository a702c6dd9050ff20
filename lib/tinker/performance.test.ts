import { describe, expect, it } from 'vitest';
import { decodeForwardBackwardProto } from './forward-request';
import { ProtoWriter } from './proto-wire';
import { forwardResultJson, forwardResultProto } from './results';
import { wireTensorFromArray } from './tensors';
import type { ForwardResult } from './types';

/**
 * The codec's share of a typical RL step: 128 datums × 512 tokens in, 65,536 logprobs out. Each must take well under
 * 50 ms. Measured as the process's CPU time (the fastest of 9 runs after 3 to warm up), which other processes on a
 * busy 2-core machine do not inflate the way they do wall-clock time; both are printed.
 */
function measure(run: () => unknown): { cpu: number; wall: number; wallMedian: number } {
  for (let i = 0; i < 3; i++) run();
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < 9; i++) {
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    run();
    wall.push(performance.now() - started);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1000);
  }
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  return { cpu: sorted(cpu)[0], wall: sorted(wall)[0], wallMedian: sorted(wall)[4] };
}

function report(what: string, m: ReturnType<typeof measure>): string {
  return `${what}: CPU ${m.cpu.toFixed(1)} ms, wall min ${m.wall.toFixed(1)} ms, median ${m.wallMedian.toFixed(1)} ms`;
}

const N = 512;
const DATUMS = 128;

/** A ppo forward_backward body of the SDK 0.25 shape: tokens, int64 targets, float32 logprobs / advantages / weights. */
function ppoBody(): Uint8Array {
  const bytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const tensor = (dtype: number, data: ArrayBufferView) => {
    const t = new ProtoWriter();
    t.bytes(1, bytes(data));
    t.int(3, dtype);
    t.packedInts(4, [N]);
    return t;
  };
  const w = new ProtoWriter();
  w.string(1, '0b9c6f0e-3f4a-4c57-9d0e-1f2a3b4c5d6e');
  w.int(2, 1);
  for (let d = 0; d < DATUMS; d++) {
    const datum = new ProtoWriter();
    const text = new ProtoWriter();
    text.bytes(1, bytes(Int32Array.from({ length: N }, (_, i) => (d * 7919 + i * 104729) % 150000)));
    const chunk = new ProtoWriter();
    chunk.message(1, text);
    datum.message(1, chunk);
    const inputs: [string, ProtoWriter][] = [
      [
        'target_tokens',
        tensor(
          2,
          BigInt64Array.from({ length: N }, (_, i) => BigInt((d + i * 31) % 150000)),
        ),
      ],
      [
        'logprobs',
        tensor(
          1,
          Float32Array.from({ length: N }, (_, i) => -1 - (i % 13) / 7),
        ),
      ],
      [
        'advantages',
        tensor(
          1,
          Float32Array.from({ length: N }, (_, i) => ((i + d) % 5) / 2 - 1),
        ),
      ],
      ['weights', tensor(1, new Float32Array(N).fill(1))],
    ];
    for (const [name, t] of inputs) {
      const entry = new ProtoWriter();
      entry.string(1, name);
      entry.message(2, t);
      datum.message(2, entry);
    }
    w.message(3, datum);
  }
  w.string(4, 'ppo');
  return w.finish();
}

describe('performance (128 datums × 512 tokens)', () => {
  it('decodes the protobuf forward_backward body in well under 50 ms', () => {
    const body = ppoBody();
    const m = measure(() => decodeForwardBackwardProto(body));
    console.log(report(`decode a ${body.length}-byte protobuf body`, m));
    expect(decodeForwardBackwardProto(body).payload.data).toHaveLength(DATUMS);
    expect(m.cpu).toBeLessThan(50);
  });

  it('encodes the 65,536 logprobs of its result in well under 50 ms, as protobuf and as JSON', () => {
    const result: ForwardResult = {
      loss_fn_outputs: Array.from({ length: DATUMS }, (_, d) => ({
        logprobs: wireTensorFromArray(
          Float32Array.from({ length: N }, (_, i) => -Math.abs(Math.sin(d * N + i)) * 7),
          [N],
        ),
      })),
      metrics: { 'loss:sum': 1234.5 },
    };
    const proto = measure(() => forwardResultProto(result));
    const json = measure(() => forwardResultJson(result));
    console.log(report('encode as protobuf', proto));
    console.log(report('encode as JSON', json));
    expect(proto.cpu).toBeLessThan(50);
    expect(json.cpu).toBeLessThan(50);
  });
});
