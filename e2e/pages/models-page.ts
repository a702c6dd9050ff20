import type { Locator, Page } from '@playwright/test';

export class ModelsPage {
  readonly heading: Locator;
  readonly table: Locator;
  readonly rows: Locator;
  readonly search: Locator;
  readonly emptyState: Locator;
  readonly loadMore: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole('heading', { level: 1, name: 'Models' });
    this.table = page.getByTestId('models-table');
    this.rows = page.getByTestId('model-row');
    this.search = page.getByRole('searchbox', { name: 'Search models by name' });
    this.emptyState = page.getByTestId('models-empty');
    this.loadMore = page.getByTestId('models-load-more');
  }

  async goto(entity?: string) {
    await this.page.goto(entity ? `/models?entity=${encodeURIComponent(entity)}` : '/models');
  }

  row(name: string): Locator {
    return this.rows.filter({ has: this.page.getByText(name, { exact: true }) });
  }
}
