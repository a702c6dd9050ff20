import type { Locator, Page } from '@playwright/test';

export class ModelsPage {
  readonly heading: Locator;
  readonly table: Locator;
  readonly rows: Locator;
  readonly search: Locator;
  readonly emptyState: Locator;
  readonly emptyStateCreate: Locator;
  readonly loadMore: Locator;
  readonly newModel: Locator;
  readonly createDialog: Locator;
  readonly projectFilter: Locator;
  readonly baseModelFilter: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole('heading', { level: 1, name: 'Models' });
    this.table = page.getByTestId('models-table');
    this.rows = page.getByTestId('model-row');
    this.search = page.getByRole('searchbox', { name: 'Search models by name' });
    this.emptyState = page.getByTestId('models-empty');
    this.emptyStateCreate = this.emptyState.getByRole('button', { name: 'Create a model' });
    this.loadMore = page.getByTestId('models-load-more');
    this.newModel = page.getByTestId('new-model');
    this.createDialog = page.getByTestId('create-model-dialog');
    this.projectFilter = page.getByTestId('model-filter-project');
    this.baseModelFilter = page.getByTestId('model-filter-base-model');
  }

  async goto(entity?: string) {
    await this.page.goto(entity ? `/models?entity=${encodeURIComponent(entity)}` : '/models');
  }

  /** Creates a model through the dialog; the page then navigates to the new model. */
  async createModel(project: string, name: string, baseModel?: string) {
    await this.newModel.click();
    await this.submitCreateDialog(project, name, baseModel);
  }

  /** Fills and submits the open create dialog (however it was opened). */
  async submitCreateDialog(project: string, name: string, baseModel?: string) {
    await this.createDialog.getByLabel('Project').fill(project);
    await this.createDialog.getByLabel('Name', { exact: true }).fill(name);
    if (baseModel) await this.createDialog.getByLabel('Base model').selectOption(baseModel);
    await this.createDialog.getByRole('button', { name: 'Create model' }).click();
  }

  row(name: string): Locator {
    return this.rows.filter({ has: this.page.getByText(name, { exact: true }) });
  }

  /** The row's best-metric cell: value, then metric name and step. */
  bestMetric(name: string): Locator {
    return this.row(name).getByTestId('model-best-metric');
  }
}
