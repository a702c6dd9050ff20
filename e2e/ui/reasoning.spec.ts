import path from 'node:path';
import type { Page } from '@playwright/test';
import { expect, test } from '../fixtures/test';
import { signUpViaApi } from '../fixtures/users';
import { PlaygroundPage } from '../pages/playground-page';

/*
 * A reasoning model's answer in the playground: the think block folded above the answer. The built-in models have
 * no reasoning parser (lib/inference/reasoning.ts is tested through the API in tests/inference/hf-reasoning.test.ts),
 * so the stream is answered here, chunk by chunk as the server sends it for a Qwen3 model with reasoning_parser.
 */
const MODEL = 'tuneboard/tiny-random';
const OUT = path.join('test-results', 'screenshots');

function chunk(delta: Record<string, string>, finish: string | null = null): string {
  const lp = { content: [{ token: 'token_id:1', logprob: -0.1, bytes: [97], top_logprobs: [] }] };
  const choice = { index: 0, delta, logprobs: lp, finish_reason: finish, token_ids: null };
  return `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [choice] })}\n\n`;
}

const REASONING = ['The user', ' greets me.', ' A short,', ' friendly reply', ' fits.'];

async function answerWithReasoning(page: Page) {
  await page.route('**/v1/chat/completions', (route) =>
    route.fulfill({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: [
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] })}\n\n`,
        chunk({}),
        ...REASONING.map((r) => chunk({ reasoning: r, reasoning_content: r })),
        chunk({}),
        chunk({ content: 'Hello!' }),
        chunk({ content: ' How can I help?' }, 'stop'),
        'data: [DONE]\n\n',
      ].join(''),
    }),
  );
}

test.beforeEach(async ({ page }) => {
  await signUpViaApi(page.request);
});

test('reasoning is folded above the answer, and opens to show the think text', async ({ page }) => {
  await answerWithReasoning(page);
  const playground = new PlaygroundPage(page);
  await playground.goto(MODEL);
  await playground.sendMessage('Hi');
  await playground.waitForAnswerText(0);

  const pane = playground.pane(0);
  await expect(pane.getByTestId('assistant-text')).toHaveText('Hello! How can I help?');
  const block = pane.getByTestId('reasoning');
  await expect(block).toContainText(`Reasoning(${REASONING.length} tokens)`);
  // Folded by default: the answer comes first.
  await expect(block).not.toHaveAttribute('open');
  await expect(pane.getByTestId('reasoning-text')).toBeHidden();
  await block.locator('summary').click();
  await expect(pane.getByTestId('reasoning-text')).toHaveText(REASONING.join(''));
});

for (const theme of ['light', 'dark'] as const) {
  test.describe(`${theme}`, () => {
    test.use({ colorScheme: theme });
    for (const width of [390, 1280]) {
      test(`screenshot at ${width} px`, async ({ page }) => {
        await page.setViewportSize({ width, height: 844 });
        await answerWithReasoning(page);
        const playground = new PlaygroundPage(page);
        await playground.goto(MODEL);
        await playground.sendMessage('Hi');
        await playground.waitForAnswerText(0);
        const block = playground.pane(0).getByTestId('reasoning');
        await page.screenshot({
          path: path.join(OUT, `${theme}-reasoning-folded-${width}.png`),
          animations: 'disabled',
        });
        await block.locator('summary').click();
        await expect(playground.pane(0).getByTestId('reasoning-text')).toBeVisible();
        await page.screenshot({ path: path.join(OUT, `${theme}-reasoning-open-${width}.png`), animations: 'disabled' });
      });
    }
  });
}
