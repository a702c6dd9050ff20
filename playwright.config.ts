import fs from 'node:fs';
import path from 'node:path';
import { defineConfig, devices } from '@playwright/test';

// E2E_PORT lets a second checkout (or CI beside a developer's run) use another port.
const PORT = Number(process.env.E2E_PORT ?? 3100);
const baseURL = `http://localhost:${PORT}`;

/*
 * Browser specs run against a production build (`npm run start`; the test script builds first) with
 * its own PGlite directory, so they never touch a developer's data. Debian's Chromium is used instead
 * of a downloaded browser: machines that run these specs have no internet access.
 */
// The server reads its base models from a copy of config/base-models.json that specs may extend (the
// real-model spec adds a tiny Hugging Face model it generates); the server re-reads the file when it changes.
const E2E_BASE_MODELS = path.resolve('.data/e2e/base-models.json');
fs.mkdirSync(path.dirname(E2E_BASE_MODELS), { recursive: true });
fs.copyFileSync('config/base-models.json', E2E_BASE_MODELS);
/** Token of the external training workers specs start (the Python worker). */
export const E2E_WORKER_TOKEN = 'e2e-worker-token';
/**
 * Where the server looks for the Hugging Face Hub: a port the Hub-download spec serves a stand-in on (there is no
 * network here), and a Hugging Face cache of the run's own.
 */
export const E2E_HUB_PORT = PORT + 7;

export default defineConfig({
  testDir: 'e2e',
  fullyParallel: true,
  forbidOnly: Boolean(process.env.CI),
  retries: process.env.CI ? 1 : 0,
  reporter: [['list'], ['html', { open: 'never', outputFolder: 'playwright-report' }]],
  expect: { timeout: 10_000 },
  use: {
    baseURL,
    // The trace's action-by-action DOM snapshots, not its screencast: encoding a frame for every paint made Chromium
    // the busiest process of the run, and the model-detail spec took 128 s with it against 97–104 s without (machine
    // CPU 205 s against 145–156). A person after the film strip runs a spec with `--trace on`.
    // CI records a trace only when it retries a failed spec: taking the snapshots on every action of every spec
    // still cost the model-detail and playground specs 174 s against 152 s without, and Chromium is the suite's
    // busiest process (about 480 of its 870 CPU seconds).
    trace: { mode: process.env.CI ? 'on-first-retry' : 'retain-on-failure', screenshots: false },
    screenshot: 'only-on-failure',
    launchOptions: {
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
    },
  },
  projects: [
    { name: 'chromium', use: { ...devices['Desktop Chrome'] }, testIgnore: /screenshots\.spec\.ts$/ },
    // Every page in light and dark, written to test-results/screenshots/ for a person to look at.
    { name: 'screenshots', use: { ...devices['Desktop Chrome'] }, testMatch: /screenshots\.spec\.ts$/ },
  ],
  webServer: {
    command: 'npm run start',
    url: `${baseURL}/v1/health`,
    reuseExistingServer: !process.env.CI,
    timeout: 120_000,
    stdout: 'ignore',
    stderr: 'pipe',
    env: {
      PORT: String(PORT),
      TUNEBOARD_DATA_DIR: '.data/e2e/pglite',
      TUNEBOARD_ARTIFACT_DIR: '.data/e2e/artifacts',
      TUNEBOARD_BASE_MODELS_FILE: E2E_BASE_MODELS,
      TUNEBOARD_WORKER_TOKEN: E2E_WORKER_TOKEN,
      HF_ENDPOINT: `http://127.0.0.1:${E2E_HUB_PORT}`,
      HF_HOME: path.resolve('.data/e2e/hf-home'),
      NEXT_TELEMETRY_DISABLED: '1',
    },
  },
});
