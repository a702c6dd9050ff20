/** Starting and stopping the production server the HTTP benchmarks measure (`npm run build` first). */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Builds the production server when there is no build yet (a fresh clone's first benchmark run). */
export function ensureBuild(): void {
  if (fs.existsSync(path.join(ROOT, '.next', 'BUILD_ID'))) return;
  console.log('no production build found: running npm run build');
  execFileSync('npm', ['run', 'build'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
}

export interface BenchServer {
  base: string;
  stop(): Promise<void>;
  /** Resident memory of the server (the largest process in its group: npm and sh above it are not the server), in MiB. */
  rssMiB(): number;
  /** CPU seconds (user + system) the server's process group has used so far, every thread included. */
  cpuSeconds(): number;
}

const CLOCK_TICKS = 100;

function groupCpuSeconds(pgid: number): number {
  const pids = execFileSync('ps', ['-o', 'pid=', '-g', String(pgid)], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  let seconds = 0;
  for (const pid of pids) {
    try {
      seconds += processCpuSeconds(Number(pid));
    } catch {
      // exited between ps and the read
    }
  }
  return seconds;
}

/** CPU seconds (user + system) one process has used so far, every thread included (Linux). */
export function processCpuSeconds(pid: number): number {
  // Fields 14 and 15 of /proc/<pid>/stat, counted after the command name (which may hold spaces).
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function groupRssMiB(pgid: number): number {
  const out = execFileSync('ps', ['-o', 'rss=', '-g', String(pgid)], { encoding: 'utf8' });
  return (
    Math.max(
      0,
      ...out
        .split('\n')
        .filter(Boolean)
        .map((l) => Number(l.trim())),
    ) / 1024
  );
}

/**
 * Waits until the server is idle: after it answers, Next.js goes on loading every route's code in the
 * background (about 3 CPU seconds here), which would be counted against whatever is measured first.
 */
async function settle(pgid: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = groupCpuSeconds(pgid);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    const now = groupCpuSeconds(pgid);
    if (now - last < 0.05) return;
    last = now;
  }
}

/**
 * `next start` on `port` with `env` over this process's environment, resolved once `readyPath` answers 200.
 * The server runs in its own process group so that stop() ends npm and the Next server under it together.
 */
export async function startServer(
  port: number,
  env: Record<string, string>,
  readyPath = '/v1/health',
): Promise<BenchServer> {
  // The server as users start it (`npm start`: its malloc setting and keep-alive timeout). BENCH_SERVER_PROF=<dir>:
  // the server writes a V8 CPU profile per thread there when it stops (Node refuses --cpu-prof in NODE_OPTIONS, so
  // the server runs under node itself, given what `npm start` would have given it).
  const prof = process.env.BENCH_SERVER_PROF;
  const startScript: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;
  // Its `NAME=${NAME:-default}` settings, PORT aside (the benchmark's own).
  const defaults = Object.fromEntries(
    [...startScript.matchAll(/(\w+)=\$\{\1:-([^}]+)\}/g)]
      .filter(([, name]) => name !== 'PORT')
      .map(([, n, v]) => [n, v]),
  );
  const [command, args] = prof
    ? [
        process.execPath,
        [
          '--cpu-prof',
          `--cpu-prof-dir=${prof}`,
          'node_modules/next/dist/bin/next',
          'start',
          ...startScript
            .slice(startScript.indexOf('next start') + 'next start'.length)
            .trim()
            .split(/\s+/),
        ],
      ]
    : ['npm', ['start']];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...(prof ? defaults : {}),
      ...process.env,
      ...env,
      NODE_ENV: 'production',
      PORT: String(port),
      NEXT_TELEMETRY_DISABLED: '1',
    },
    // BENCH_SERVER_LOG=1 shows the server's own output (its log lines go to stdout).
    stdio: ['ignore', process.env.BENCH_SERVER_LOG === '1' ? 'inherit' : 'ignore', 'inherit'],
    detached: true,
  });
  const base = `http://127.0.0.1:${port}`;
  let stopping = false;
  child.on('exit', (code, signal) => {
    if (!stopping) console.error(`[bench] the server exited on its own (${signal ?? `code ${code}`})`);
  });
  // Resolved once every process of the group has exited: the server may take seconds to close its database, and
  // whatever runs next (another server, bench/db-alone.ts) may open the same directory, which PGlite must never have
  // open in two processes.
  const stop = async () => {
    stopping = true;
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
    const deadline = Date.now() + 60_000;
    while (groupAlive(child.pid!)) {
      if (Date.now() > deadline) {
        process.kill(-child.pid!, 'SIGKILL');
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}${readyPath}`)).ok) {
        await settle(child.pid!);
        return {
          base,
          stop,
          rssMiB: () => groupRssMiB(child.pid!),
          cpuSeconds: () => groupCpuSeconds(child.pid!),
        };
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  await stop();
  throw new Error('server did not start');
}
