import { expect, test } from '../fixtures/test';
import { createModelViaApi, logGroups, trajectoryGroup } from '../fixtures/seed';
import { apiKeyFor, newUser, signUpViaApi, uniqueId } from '../fixtures/users';
import { ModelPage } from '../pages/model-page';

test('debug click', async ({ page, request }) => {
  const user = await signUpViaApi(page.request, newUser());
  const key = await apiKeyFor(request, user);
  const model = await createModelViaApi(request, key, { project: 'traj', name: `tr-${uniqueId()}` });
  await logGroups(request, key, model.id, 'train', [trajectoryGroup(0.3)]);
  const m = new ModelPage(page);
  await m.goto(model.id);
  await expect(m.chartMarks('reward').first()).toBeAttached();
  const surface = m.chart('reward').getByTestId('metric-chart').locator('svg.recharts-surface');
  console.log('surfaces', await surface.count(), JSON.stringify(await surface.first().boundingBox()));
  await surface.first().hover();
  await page.waitForTimeout(500);
  console.log('tooltip', await m.chart('reward').locator('.recharts-tooltip-wrapper').innerText().catch(() => 'none'));
  const dot = m.chart('reward').locator('circle.recharts-dot').first();
  console.log('dot', JSON.stringify(await dot.boundingBox()));
  await dot.hover();
  await page.waitForTimeout(300);
  console.log('tooltip2', await m.chart('reward').locator('.recharts-tooltip-wrapper').innerText().catch(() => 'none'));
  await dot.click();
  await page.waitForTimeout(500);
  console.log('selected', await m.trajectoriesTab.getAttribute('aria-selected'));
});
