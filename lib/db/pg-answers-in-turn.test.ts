import { EventEmitter } from 'node:events';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { config } from '@/lib/config';
import { inTurn, waitingForTurn } from '@/lib/event-loop/turns';
import { withAnswersInTurn } from './pg-answers-in-turn';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
async function drain() {
  while (waitingForTurn() > 0) await nextTurn();
  await nextTurn();
}
/** Takes more than a turn's whole budget. */
function spend() {
  const until = performance.now() + config.requestWorkPerTurnMs + 1;
  while (performance.now() < until);
}

/** A client on a socket the test drives, and what the socket's listeners saw. */
function clientOnFakeSocket() {
  const socket = Object.assign(new EventEmitter(), { setNoDelay() {}, connect() {}, write: () => true, end() {} });
  const Client = withAnswersInTurn(pg.Client);
  const client = new Client({ stream: socket as unknown as pg.ClientConfig['stream'] });
  const seen: string[] = [];
  for (const event of ['data', 'end', 'close', 'error', 'drain'])
    socket.on(event, (arg?: unknown) => seen.push(arg instanceof Buffer ? `data:${arg}` : event));
  return { client, socket, seen };
}

describe('PostgreSQL answers through the request work budget', () => {
  it("re-emits a socket's events at once while the turn has room", async () => {
    await drain();
    const { socket, seen } = clientOnFakeSocket();
    socket.emit('data', Buffer.from('a'));
    expect(seen).toEqual(['data:a']);
  });

  it('defers them past a spent turn, in order, its close after its data, and leaves other events alone', async () => {
    await drain();
    const { socket, seen } = clientOnFakeSocket();
    inTurn(spend); // this turn's budget is gone
    socket.emit('data', Buffer.from('a'));
    socket.emit('data', Buffer.from('b'));
    socket.emit('drain');
    socket.emit('error', new Error('reset'));
    socket.emit('close');
    expect(seen).toEqual(['drain']);
    await drain();
    expect(seen).toEqual(['drain', 'data:a', 'data:b', 'error', 'close']);
  });

  it('answers a real query (node-postgres parses the deferred bytes as ever)', async () => {
    await drain();
    const { client, socket } = clientOnFakeSocket();
    // An answer to "select 1 as n" in the simple protocol: RowDescription, DataRow, CommandComplete, ReadyForQuery.
    const msg = (code: string, body: Buffer) => {
      const head = Buffer.alloc(5);
      head.write(code, 0, 'latin1');
      head.writeInt32BE(body.length + 4, 1);
      return Buffer.concat([head, body]);
    };
    const field = Buffer.concat([
      Buffer.from('n\0'),
      Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 23, 0, 4, 255, 255, 255, 255, 0, 0]),
    ]);
    const answer = Buffer.concat([
      msg('T', Buffer.concat([Buffer.from([0, 1]), field])),
      msg('D', Buffer.from([0, 1, 0, 0, 0, 1, 0x31])),
      msg('C', Buffer.from('SELECT 1\0')),
      msg('Z', Buffer.from('I')),
    ]);
    const connected = client.connect();
    socket.emit('connect');
    socket.emit('data', Buffer.concat([msg('R', Buffer.from([0, 0, 0, 0])), msg('Z', Buffer.from('I'))]));
    await connected;
    const result = client.query('select 1 as n');
    inTurn(spend);
    socket.emit('data', answer);
    await drain();
    expect((await result).rows).toEqual([{ n: 1 }]);
  });
});
