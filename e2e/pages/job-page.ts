import type { Locator, Page } from '@playwright/test';

export class JobPage {
  readonly status: Locator;
  readonly progress: Locator;
  readonly eventsTable: Locator;
  readonly eventRows: Locator;
  readonly config: Locator;
  readonly cancelButton: Locator;
  readonly dialog: Locator;
  readonly error: Locator;
  readonly modelLink: Locator;
  readonly eventOrder: Locator;

  constructor(readonly page: Page) {
    this.status = page.getByTestId('job-status').first();
    this.progress = page.getByRole('progressbar', { name: 'Training progress' });
    this.eventsTable = page.getByTestId('job-events-table');
    this.eventRows = page.getByTestId('job-event-row');
    this.config = page.getByTestId('job-config');
    this.cancelButton = page.getByTestId('cancel-job');
    this.dialog = page.getByRole('dialog');
    this.error = page.getByTestId('job-error');
    this.modelLink = page.getByTestId('job-model-link');
    this.eventOrder = page.getByTestId('events-order');
  }

  async goto(jobId: string) {
    await this.page.goto(`/jobs/${jobId}`);
  }
}
