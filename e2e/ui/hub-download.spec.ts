import fs from 'node:fs';
import path from 'node:path';
import { E2E_HUB_PORT } from '../../playwright.config';
import { startHubStandin, writeFakeHubModel, type HubStandin } from '../../tests/support/hub-standin';
import { expect, test } from '../fixtures/test';
import { createModelViaApi } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { ModelPage } from '../pages/model-page';

/*
 * A base model registered by its Hugging Face Hub id (issue 43): the model page says the server is downloading it,
 * with the progress moving, and the notice goes once it is there. The Hub is a local stand-in at the server's
 * HF_ENDPOINT (playwright.config.ts), sending the files slowly; the weights are filler, not a working model.
 */
const MODELS_FILE = path.resolve('.data/e2e/base-models.json');
let hub: HubStandin | undefined;

test.afterAll(async () => {
  await hub?.close();
});

test('the model page follows the download of a Hub-named base model', async ({ page, request }) => {
  test.slow();
  const id = `e2e-org/tiny-${uniqueId()}`;
  const source = path.resolve('.data/e2e/hub-source');
  writeFakeHubModel(source);
  // 14 MB (the real Qwen3 tokenizer is most of it) at 1.5 MB/s: about 10 s of download, several of the page's
  // progress polls; at 600 kB/s the spec spent 24 s waiting on it, the longest of the browser suite.
  hub = await startHubStandin({ [id]: source }, { port: E2E_HUB_PORT, bytesPerSecond: 1_500_000 });
  const file = JSON.parse(fs.readFileSync(MODELS_FILE, 'utf8')) as { models: object[] };
  file.models.push({ id, backend: 'hf', description: 'From the stand-in Hub (e2e)' });
  fs.writeFileSync(MODELS_FILE, JSON.stringify(file));

  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  // The server re-reads the base-models file within a second; the model can be created at once (training does not
  // wait for the server's copy).
  let model: { id: string } | undefined;
  await expect(async () => {
    model = await createModelViaApi(request, key, { project: 'hub', name: `hub-${uniqueId()}`, base_model: id });
  }).toPass({ timeout: 10_000 });

  const m = new ModelPage(page);
  await m.goto(model!.id);
  const notice = page.getByTestId('base-model-download');
  await expect(notice).toContainText('The server is fetching the base model from the Hugging Face Hub');
  const bar = page.getByRole('progressbar', { name: 'Download progress' });
  await expect(bar).toBeVisible();
  const first = Number(await bar.getAttribute('aria-valuenow'));
  await expect
    .poll(async () => Number(await bar.getAttribute('aria-valuenow')), { timeout: 15_000 })
    .toBeGreaterThan(first);
  await page.screenshot({ path: test.info().outputPath('hub-download.png'), fullPage: false });
  // Done: the notice goes, and the base model answers on /v1/models.
  await expect(notice).toHaveCount(0, { timeout: 30_000 });
  const models = await request.get('/v1/models', { headers: { Authorization: `Bearer ${key}` } });
  const listed = ((await models.json()) as { data: { id: string; available: boolean; download?: object }[] }).data;
  const entry = listed.find((x) => x.id === id);
  expect(entry, JSON.stringify(entry)).toMatchObject({ available: true, download: { status: 'ready' } });
});
