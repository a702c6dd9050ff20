/**
 * `npm run bench:ui` (headless Debian Chromium, loopback): first-load JavaScript per dashboard route
 * (gzipped bytes of the scripts a first visit downloads; goal ≤ 250 kB for the heaviest), and the time until
 * a model page with 20 metric series of 100,000 points each is interactive (goal < 1.5 s: its charts in view drawn),
 * and the same for the run comparison page with 8 runs × 20 series × 10,000 gradient steps (goal < 1.5 s).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { startServer } from './server';

const ROOT = path.resolve(import.meta.dirname, '..');
const PORT = 3230;
const BASE = `http://127.0.0.1:${PORT}`;
// --quick (CI): a small seed and one timed load, so the benchmark cannot break unnoticed.
const QUICK = process.argv.includes('--quick');
const SERIES = Number(process.env.BENCH_SERIES ?? (QUICK ? 4 : 20));
const POINTS = Number(process.env.BENCH_POINTS ?? (QUICK ? 2_000 : 100_000));
const LOADS = QUICK ? 1 : 3;
// Run comparison: runs × series × points of each run's training curve (quick: smaller, same page).
const COMPARE_RUNS = Number(process.env.BENCH_COMPARE_RUNS ?? 8);
const COMPARE_SERIES = Number(process.env.BENCH_COMPARE_SERIES ?? (QUICK ? 4 : 20));
const COMPARE_POINTS = Number(process.env.BENCH_COMPARE_POINTS ?? (QUICK ? 2_000 : 10_000));
/** The heaviest dashboard route's first-load JavaScript, gzipped. */
const JS_BUDGET_KB = 250;
const INTERACTIVE_GOAL_MS = 1500;
const EVAL_RUN_ID = '00000000-0000-4000-8000-000000000000';

async function main() {
  if (!fs.existsSync(path.join(ROOT, '.next', 'BUILD_ID')))
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const dir = path.join(ROOT, '.data', 'bench-ui');
  const seedFile = path.join(
    dir,
    `seed-${SERIES}x${POINTS}-compare-${COMPARE_RUNS}x${COMPARE_SERIES}x${COMPARE_POINTS}.json`,
  );
  const env = {
    ...process.env,
    DATABASE_URL: '',
    TUNEBOARD_DATA_DIR: path.join(dir, 'pglite'),
    TUNEBOARD_ARTIFACT_DIR: path.join(dir, 'artifacts'),
    NEXT_TELEMETRY_DISABLED: '1',
  };
  // Seeding 2M points takes minutes; BENCH_REUSE_SEED=1 keeps the database of an earlier run of the same size.
  let seed: { modelId: string; compareIds: string[] };
  if (process.env.BENCH_REUSE_SEED === '1' && fs.existsSync(seedFile)) {
    seed = JSON.parse(fs.readFileSync(seedFile, 'utf8'));
    console.log(`reusing the seeded database (${SERIES} series × ${POINTS} points)`);
  } else {
    fs.rmSync(dir, { recursive: true, force: true });
    const t0 = Date.now();
    seed = JSON.parse(
      execFileSync(
        'npx',
        [
          'tsx',
          '--conditions=react-server',
          'bench/ui-seed.ts',
          ...[SERIES, POINTS, COMPARE_RUNS, COMPARE_SERIES, COMPARE_POINTS].map(String),
        ],
        { cwd: ROOT, env, encoding: 'utf8' },
      )
        .trim()
        .split('\n')
        .at(-1)!,
    );
    fs.writeFileSync(seedFile, JSON.stringify(seed));
    console.log(
      `seeded ${SERIES} series × ${POINTS} points and ${COMPARE_RUNS} runs × ${COMPARE_SERIES} × ${COMPARE_POINTS} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
  }
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  const server = await startServer(PORT, env).catch(async (err) => {
    await browser.close();
    throw err;
  });
  try {
    const context = await browser.newContext({ baseURL: BASE });
    const signIn = await context.request.post('/v1/auth/sign-in', {
      data: { email: 'ui-bench@bench.test', password: 'ui-bench-password' },
    });
    if (!signIn.ok()) throw new Error(`sign-in failed: ${signIn.status()}`);

    // The auth pages redirect a signed-in visitor to /models: they are measured from a context without the cookie.
    const signedOut = await browser.newContext({ baseURL: BASE });
    const routes: [string, typeof context][] = [
      ['/sign-in', signedOut],
      ['/sign-up', signedOut],
      ...[
        '/models',
        `/models/${seed.modelId}`,
        `/compare?models=${seed.compareIds.join(',')}`,
        '/playground',
        '/evals',
        '/evals/new',
        // The run page fetches its run in the browser: any id loads the route's scripts (this one draws "No such run").
        `/evals/runs/${EVAL_RUN_ID}`,
        '/sft/new',
        '/settings/api-keys',
        '/settings/teams',
        '/settings/usage',
        '/docs',
      ].map((route): [string, typeof context] => [route, context]),
    ];
    // Four routes at a time: bytes do not depend on how busy the server is (which files count as first load is read
    // from the HTML), and each load waits half a second of network quiet (networkidle), which one at a time made 10
    // routes take most of the run.
    const rows: [string, number, number][] = new Array(routes.length);
    const measureRoute = async (route: string, routeContext: typeof context): Promise<[string, number, number]> => {
      const page = await routeContext.newPage();
      const cdp = await routeContext.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      const scripts = new Map<string, number>();
      const types = new Map<string, string>();
      const urls = new Map<string, string>();
      cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
      cdp.on('Network.responseReceived', (e) => types.set(e.requestId, e.type));
      cdp.on('Network.loadingFinished', (e) => {
        if (types.get(e.requestId) === 'Script') scripts.set(e.requestId, e.encodedDataLength);
      });
      const response = await page.goto(route, { waitUntil: 'networkidle' });
      // Scripts the HTML names (script tags and script preloads) are the route's first load; the rest are chunks
      // the page imports lazily after it hydrates (charts, editors), which the goal allows. Read from the HTML, not
      // from who requested each file: a chunk the HTML names is sometimes fetched by the runtime before the parser
      // reaches its tag, on a busy machine, and moved 1.3 kB between the columns from one run to the next.
      const html = (await response?.text()) ?? '';
      const named = new Set(
        [...html.matchAll(/<(?:script|link)\b[^>]*?\s(?:src|href)="([^"]+\.js[^"]*)"/g)].map(
          (m) => new URL(m[1].replaceAll('&amp;', '&'), page.url()).href,
        ),
      );
      const firstLoad = (id: string) => named.has(urls.get(id) ?? '');
      const sum = (pick: (id: string) => boolean) =>
        [...scripts].filter(([id]) => pick(id)).reduce((a, [, b]) => a + b, 0);
      await page.close();
      return [
        route
          .replace(seed.modelId, '[modelId]')
          .replace(EVAL_RUN_ID, '[runId]')
          .replace(/\?models=.*/, '?models=…'),
        sum(firstLoad),
        sum((id) => !firstLoad(id)),
      ];
    };
    let nextRoute = 0;
    const measureRoutes = async () => {
      for (let r = nextRoute++; r < routes.length; r = nextRoute++) rows[r] = await measureRoute(...routes[r]);
    };
    await Promise.all(Array.from({ length: 4 }, measureRoutes));

    // Interactive: a person who opens the page and goes to its charts sees them drawn. The page is loaded in a
    // 1280×720 window, scrolled to its first chart as soon as that exists, and timed until every chart then in
    // view has drawn its lines (`visible`). Charts out of view draw when they near it (use-near-viewport.ts), so
    // the same load in a window tall enough to hold every chart (`all`) is what drawing all of them costs.
    const chartsDrawn = async (
      url: string,
      linesPerChart: number,
      allCharts: number | null,
    ): Promise<{ ms: number; marks: string }> => {
      const page = await context.newPage();
      if (allCharts !== null) await page.setViewportSize({ width: 1280, height: 20_000 });
      const started = Date.now();
      await page.goto(url, { waitUntil: 'commit' });
      // Scrolled from inside the page as soon as the first chart exists: Playwright's own scrolling waits for the
      // element to hold still over animation frames, which added 300–600 ms of its own to the figure.
      await page.waitForFunction(
        () => {
          const chart = document.querySelector('[data-testid="metric-chart"]');
          chart?.scrollIntoView({ block: 'start' });
          return chart !== null;
        },
        null,
        { timeout: 60_000, polling: 50 },
      );
      await page.waitForFunction(
        ({ lines, all }) => {
          // No named inner functions here: tsx would wrap them in a helper the page does not have.
          const charts = [...document.querySelectorAll('[data-testid="metric-chart"]')].map((c) => ({
            rect: c.getBoundingClientRect(),
            drawn: c.querySelectorAll('.recharts-line-curve').length >= lines,
          }));
          const inView = charts.filter((c) => c.rect.bottom > 0 && c.rect.top < window.innerHeight);
          return all === null
            ? inView.length > 0 && inView.every((c) => c.drawn)
            : charts.filter((c) => c.drawn).length >= all;
        },
        { lines: linesPerChart, all: allCharts },
        { timeout: 60_000, polling: 50 },
      );
      const ms = Date.now() - started;
      // Where the time went: the HTML, hydration, and the requests for the curves (preloaded with the HTML).
      const marks = await page.evaluate(() => {
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        const history = performance
          .getEntriesByType('resource')
          .filter((e) => /\/history\?|\/compare\/curves\?/.test(e.name)) as PerformanceResourceTiming[];
        const start = Math.min(...history.map((h) => h.requestStart));
        const end = Math.max(...history.map((h) => h.responseEnd));
        return `HTML ${nav.responseEnd.toFixed(0)} ms, DOMContentLoaded ${nav.domContentLoadedEventEnd.toFixed(0)} ms, ${history.length} curve request${history.length === 1 ? '' : 's'} ${start.toFixed(0)}→${end.toFixed(0)} ms`;
      });
      await page.close();
      return { ms, marks };
    };
    const measurePage = async (url: string, linesPerChart: number, charts: number) => {
      const visible: { ms: number; marks: string }[] = [];
      for (let i = 0; i < LOADS; i++) visible.push(await chartsDrawn(url, linesPerChart, null));
      const all: { ms: number; marks: string }[] = [];
      for (let i = 0; i < LOADS; i++) all.push(await chartsDrawn(url, linesPerChart, charts));
      return { visible, all };
    };
    // The seed pairs train/ and val/ series under one metric name: SERIES / 2 charts, each with both lines.
    const modelPage = await measurePage(`/models/${seed.modelId}`, 2, Math.ceil(SERIES / 2));
    const comparePage = await measurePage(`/compare?models=${seed.compareIds.join(',')}`, COMPARE_RUNS, COMPARE_SERIES);

    console.log('\n| route | first-load JS (transferred, compressed) | loaded lazily after hydration | goal |');
    console.log('|---|---:|---:|---|');
    for (const [route, first, later] of rows)
      console.log(
        `| ${route} | ${(first / 1024).toFixed(1)} kB | ${(later / 1024).toFixed(1)} kB | ≤ ${JS_BUDGET_KB} kB ${first / 1024 <= JS_BUDGET_KB ? 'PASS' : 'MISS'} |`,
      );
    const report = (
      what: string,
      full: string,
      result: { visible: { ms: number; marks: string }[]; all: { ms: number; marks: string }[] },
    ) => {
      const best = Math.min(...result.visible.map((r) => r.ms));
      const verdict = QUICK ? 'measured only in a full run' : best < INTERACTIVE_GOAL_MS ? 'PASS' : 'MISS';
      console.log(
        `\n${what}: charts in view drawn in ${result.visible.map((r) => `${r.ms} ms`).join(', ')} (best ${best} ms; goal < ${INTERACTIVE_GOAL_MS} ms at ${full} ${verdict})`,
      );
      for (const r of result.visible) console.log(`  ${r.marks}`);
      console.log(
        `  every chart drawn at once (a 1280×20000 window): ${result.all.map((r) => `${r.ms} ms`).join(', ')} (best ${Math.min(...result.all.map((r) => r.ms))} ms)`,
      );
    };
    report(`model page with ${SERIES} series × ${POINTS} points`, '20 × 100,000', modelPage);
    report(
      `comparison page with ${COMPARE_RUNS} runs × ${COMPARE_SERIES} series × ${COMPARE_POINTS} points`,
      '8 × 20 × 10,000',
      comparePage,
    );
    // Bytes do not depend on how busy the machine is, unlike the timings: a route over the budget fails the run
    // (CI's quick run included), so a dependency that grows the bundle cannot land unnoticed.
    const over = rows.filter(([, first]) => first / 1024 > JS_BUDGET_KB).map(([route]) => route);
    if (over.length > 0) {
      console.error(`\nfirst-load JS over ${JS_BUDGET_KB} kB: ${over.join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    await browser.close();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
