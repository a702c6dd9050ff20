import type { Locator, Page } from '@playwright/test';

export class SftLaunchPage {
  readonly heading: Locator;
  readonly model: Locator;
  readonly fileInput: Locator;
  readonly dropZone: Locator;
  readonly summary: Locator;
  readonly preview: Locator;
  readonly examples: Locator;
  readonly errors: Locator;
  readonly errorLines: Locator;
  readonly datasetName: Locator;
  readonly batchSize: Locator;
  readonly learningRate: Locator;
  readonly epochs: Locator;
  readonly startFrom: Locator;
  readonly holdOut: Locator;
  readonly estimate: Locator;
  readonly submit: Locator;
  readonly serverError: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole('heading', { level: 1, name: 'Fine-tune a model' });
    this.model = page.getByLabel('Model', { exact: true });
    this.fileInput = page.getByTestId('dataset-file-input');
    this.dropZone = page.getByTestId('dataset-drop-zone');
    this.summary = page.getByTestId('dataset-summary');
    this.preview = page.getByTestId('dataset-preview');
    this.examples = page.getByTestId('dataset-example');
    this.errors = page.getByTestId('dataset-errors');
    this.errorLines = page.getByTestId('dataset-error');
    this.datasetName = page.getByLabel('Dataset name');
    this.batchSize = page.getByLabel('Batch size');
    this.learningRate = page.getByLabel('Learning rate');
    this.epochs = page.getByLabel('Epochs');
    this.startFrom = page.getByLabel('Start from');
    this.holdOut = page.getByLabel('Hold out for validation');
    this.estimate = page.getByTestId('sft-estimate');
    this.submit = page.getByTestId('sft-submit');
    this.serverError = page.getByTestId('sft-server-error');
  }

  async goto(modelId?: string) {
    await this.page.goto(modelId ? `/sft/new?model=${modelId}` : '/sft/new');
  }

  async chooseFile(name: string, text: string) {
    await this.fileInput.setInputFiles({ name, mimeType: 'application/jsonl', buffer: Buffer.from(text) });
  }

  /** A real drop: a DataTransfer holding a File, dispatched on the drop zone. */
  async dropFile(name: string, text: string) {
    const dataTransfer = await this.page.evaluateHandle(
      ([fileName, content]) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([content], fileName, { type: 'application/jsonl' }));
        return transfer;
      },
      [name, text] as const,
    );
    await this.dropZone.dispatchEvent('dragover', { dataTransfer });
    await this.dropZone.dispatchEvent('drop', { dataTransfer });
  }
}
