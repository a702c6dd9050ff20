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
  readonly heading: Locator;
  readonly newStep: Locator;
  readonly chatLink: Locator;
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
    this.heading = page.getByRole('heading', { level: 1 });
    this.newStep = page.getByTestId('job-new-step');
    this.chatLink = page.getByRole('link', { name: 'Open in the playground' });
  }

  chart(metric: string): Locator {
    return this.page.locator(`[data-testid="job-charts"] [data-testid="metric-chart-card"][data-metric="${metric}"]`);
  }

  /** The drawn lines of a chart (recharts draws each as an svg path with this class; one point draws none). */
  chartLines(metric: string): Locator {
    return this.chart(metric).locator('path.recharts-line-curve');
  }

  async goto(jobId: string) {
    await this.page.goto(`/jobs/${jobId}`);
  }
}
