import type { Locator, Page } from '@playwright/test';

/** A model's page: header, names, metric charts, checkpoints, jobs and the trajectories tab. */
export class ModelPage {
  readonly name: Locator;
  readonly latestStep: Locator;
  readonly inferenceNames: Locator;
  readonly charts: Locator;
  readonly chartCards: Locator;
  readonly smoothing: Locator;
  readonly logScale: Locator;
  readonly checkpointsTable: Locator;
  readonly checkpointRows: Locator;
  readonly bestBadge: Locator;
  readonly jobsTable: Locator;
  readonly jobRows: Locator;
  readonly deleteButton: Locator;
  readonly fineTune: Locator;
  readonly bestMetric: Locator;
  readonly deleteDialog: Locator;
  readonly deleteNameInput: Locator;
  readonly overviewTab: Locator;
  readonly trajectoriesTab: Locator;
  readonly trajectoryGroups: Locator;
  readonly bestWorst: Locator;
  readonly stepSelect: Locator;
  readonly splitSelect: Locator;
  readonly minReward: Locator;
  readonly stepList: Locator;
  readonly stepItems: Locator;

  constructor(readonly page: Page) {
    this.name = page.getByTestId('model-name');
    this.latestStep = page.getByTestId('model-latest-step');
    this.inferenceNames = page.getByTestId('inference-names');
    // The Metrics section's charts (one point per checkpoint), not the training curve's below it.
    this.charts = page.getByTestId('metric-charts').getByTestId('metric-chart');
    this.chartCards = page.getByTestId('metric-charts').getByTestId('metric-chart-card');
    this.smoothing = page.getByTestId('chart-smoothing').first();
    this.logScale = page.getByTestId('chart-log-scale').first();
    this.checkpointsTable = page.getByTestId('checkpoints-table');
    this.checkpointRows = page.getByTestId('checkpoint-row');
    this.bestBadge = page.getByTestId('best-badge');
    this.jobsTable = page.getByTestId('model-jobs-table');
    this.jobRows = page.getByTestId('model-job-row');
    this.deleteButton = page.getByTestId('delete-model');
    this.fineTune = page.getByTestId('model-fine-tune');
    this.bestMetric = page.getByTestId('best-metric');
    this.deleteDialog = page.getByRole('dialog');
    this.deleteNameInput = page.getByTestId('delete-model-confirm-name');
    this.overviewTab = page.getByRole('tab', { name: 'overview' });
    this.trajectoriesTab = page.getByRole('tab', { name: 'trajectories' });
    this.trajectoryGroups = page.getByTestId('trajectory-group');
    this.bestWorst = page.getByTestId('best-worst');
    this.stepSelect = page.getByTestId('trajectory-step');
    this.splitSelect = page.getByTestId('trajectory-split');
    this.minReward = page.getByTestId('trajectory-min-reward');
    this.stepList = page.getByTestId('trajectory-steps');
    this.stepItems = page.getByTestId('trajectory-step-item');
  }

  async goto(modelId: string, query = '') {
    await this.page.goto(`/models/${modelId}${query}`);
  }

  checkpoint(step: number): Locator {
    return this.page.locator(`[data-testid="checkpoint-row"][data-step="${step}"]`);
  }

  /** The checkpoint table's chat action: opens that step in the playground. */
  openInPlayground(step: number): Locator {
    return this.checkpoint(step).getByRole('link', { name: `Open step ${step} in the playground` });
  }

  /** The checkpoint row's copy action: a menu button that lists every name of the step. */
  copyNames(step: number): Locator {
    return this.checkpoint(step).getByRole('button', { name: `Copy model name of step ${step}` });
  }

  /** The open copy menu (it floats outside the table) and its items. */
  get copyMenu(): Locator {
    return this.page.getByRole('menu', { name: /Copy model name of step/ });
  }

  get copyMenuItems(): Locator {
    return this.copyMenu.getByRole('menuitem');
  }

  deleteCheckpoint(step: number): Locator {
    return this.checkpoint(step).getByRole('button', { name: `Delete step ${step}` });
  }

  stepItem(step: number): Locator {
    return this.page.locator(`[data-testid="trajectory-step-item"][data-step="${step}"]`);
  }

  chart(metric: string): Locator {
    return this.page.locator(
      `[data-testid="metric-charts"] [data-testid="metric-chart-card"][data-metric="${metric}"]`,
    );
  }

  /** The drawn lines of a chart: recharts renders each as an svg path with this class. */
  chartLines(metric: string): Locator {
    return this.chart(metric).locator('path.recharts-line-curve');
  }

  /** Lines, or the dots of a series with a single step (one point draws no path). */
  chartMarks(metric: string): Locator {
    return this.chart(metric).locator('path.recharts-line-curve, circle.recharts-dot');
  }
}
