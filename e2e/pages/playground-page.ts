import { expect, type Locator, type Page } from '@playwright/test';

export class PlaygroundPage {
  readonly heading: Locator;
  readonly panes: Locator;
  readonly composer: Locator;
  readonly send: Locator;
  readonly stop: Locator;
  readonly compare: Locator;
  readonly systemPrompt: Locator;
  readonly seed: Locator;
  readonly maxTokens: Locator;
  readonly temperature: Locator;
  readonly viewToggle: Locator;
  readonly exportDialog: Locator;
  readonly exportCode: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole('heading', { level: 1, name: 'Playground' });
    this.panes = page.getByTestId('chat-pane');
    this.composer = page.getByTestId('composer');
    this.send = page.getByTestId('send');
    this.stop = page.getByTestId('stop');
    this.compare = page.getByTestId('add-model');
    this.systemPrompt = page.getByLabel('System prompt');
    this.seed = page.getByLabel('Seed', { exact: true });
    this.maxTokens = page.getByLabel('Max tokens');
    this.temperature = page.getByLabel('Temperature');
    this.viewToggle = page.getByTestId('view-toggle');
    this.exportDialog = page.getByTestId('export-code-dialog');
    this.exportCode = page.getByTestId('export-code');
  }

  async goto(...models: string[]) {
    const query = new URLSearchParams(models.map((m) => ['model', m]));
    await this.page.goto(models.length ? `/playground?${query}` : '/playground');
  }

  pane(index: number): Locator {
    return this.panes.nth(index);
  }

  modelSelect(index: number): Locator {
    return this.pane(index).getByTestId('model-select');
  }

  checkpointSelect(index: number): Locator {
    return this.pane(index).getByTestId('checkpoint-select');
  }

  answers(index: number): Locator {
    return this.pane(index).getByTestId('assistant-text');
  }

  /**
   * Waits until the pane's latest answer has some text. Not toBeEmpty: a random model may answer with
   * whitespace only, which counts as empty there. The first request after a server start also loads the
   * model into a worker thread, hence the longer default.
   */
  async waitForAnswerText(index: number, timeout = 30_000) {
    await expect
      .poll(async () => ((await this.answers(index).last().textContent()) ?? '').length, { timeout })
      .toBeGreaterThan(0);
  }

  async sendMessage(text: string) {
    await this.composer.fill(text);
    await this.send.click();
  }

  /** Opens the export dialog for a pane (unless it is open) and returns the code in `language`. */
  async exportFor(index: number, language: 'curl' | 'Python' | 'TypeScript'): Promise<string> {
    if (!(await this.exportDialog.isVisible())) await this.pane(index).getByTestId('export-code-button').click();
    await this.exportDialog.getByTestId('export-language').getByText(language, { exact: true }).click();
    return (await this.exportCode.textContent()) ?? '';
  }
}
