import type { Locator, Page } from '@playwright/test';

export class UsagePage {
  readonly totalRequests: Locator;
  readonly totalPrompt: Locator;
  readonly totalCompletion: Locator;
  readonly chart: Locator;
  readonly table: Locator;
  readonly rows: Locator;

  constructor(readonly page: Page) {
    this.totalRequests = page.getByTestId('usage-total-requests');
    this.totalPrompt = page.getByTestId('usage-total-prompt');
    this.totalCompletion = page.getByTestId('usage-total-completion');
    this.chart = page.getByTestId('usage-chart');
    this.table = page.getByTestId('usage-table');
    this.rows = page.getByTestId('usage-row');
  }

  async goto(query = '') {
    await this.page.goto(`/settings/usage${query}`);
  }
}
