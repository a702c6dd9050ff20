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

  /** The pane's model combobox; its `data-value` holds the chosen model's full name. */
  modelSelect(index: number): Locator {
    return this.pane(index).getByTestId('model-select');
  }

  /** Searches the pane's model list for `name` and picks the option whose full name it is. */
  async chooseModel(index: number, name: string) {
    const input = this.modelSelect(index);
    await input.click();
    await input.fill(name);
    await this.page.locator(`[data-testid="model-option"][data-value="${name}"]`).click();
    await expect(input).toHaveAttribute('data-value', name);
  }

  /** The pane's checkpoint combobox; its `data-value` is `latest` or the chosen step. */
  checkpointSelect(index: number): Locator {
    return this.pane(index).getByTestId('checkpoint-select');
  }

  /** Searches the pane's checkpoint list for the step (or `latest`) and picks it. */
  async chooseCheckpoint(index: number, step: number | 'latest') {
    const input = this.checkpointSelect(index);
    const value = String(step);
    await input.click();
    await input.fill(value);
    await this.page.locator(`[data-testid="checkpoint-option"][data-value="${value}"]`).click();
    await expect(input).toHaveAttribute('data-value', value);
  }

  /** The pane's heading: the model's own name (never cut off), its step and entity/project. */
  paneModelName(index: number): Locator {
    return this.pane(index).getByTestId('pane-model-name');
  }

  paneModelStep(index: number): Locator {
    return this.pane(index).getByTestId('pane-model-step');
  }

  paneModelScope(index: number): Locator {
    return this.pane(index).getByTestId('pane-model-scope');
  }

  /** True when the element shows all of its text: nothing clipped or cut off with an ellipsis. */
  async showsAllText(locator: Locator): Promise<boolean> {
    return locator.evaluate((el) => el.scrollWidth <= el.clientWidth + 1 && el.scrollHeight <= el.clientHeight + 1);
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
