import type { Locator, Page } from '@playwright/test';

export class ApiKeysPage {
  readonly createForm: Locator;
  readonly name: Locator;
  readonly expiry: Locator;
  readonly create: Locator;
  readonly newKeyBox: Locator;
  readonly newKeyValue: Locator;
  readonly rows: Locator;
  readonly confirmDialog: Locator;

  constructor(readonly page: Page) {
    this.createForm = page.getByTestId('create-api-key-form');
    this.name = this.createForm.getByLabel('Name', { exact: true });
    this.expiry = this.createForm.getByLabel('Expires', { exact: true });
    this.create = this.createForm.getByRole('button', { name: 'Create key' });
    this.newKeyBox = page.getByTestId('new-api-key');
    this.newKeyValue = page.getByTestId('new-api-key-value');
    this.rows = page.getByTestId('api-key-row');
    this.confirmDialog = page.getByRole('dialog');
  }

  async goto() {
    await this.page.goto('/settings/api-keys');
  }

  /** Creates a key and returns its secret, read from the one-time box. */
  async createKey(name: string, expiry: '' | '7' | '30' | '90' | '365' = ''): Promise<string> {
    await this.name.fill(name);
    await this.expiry.selectOption(expiry);
    await this.create.click();
    await this.newKeyBox.waitFor();
    return this.newKeyValue.inputValue();
  }

  row(name: string): Locator {
    return this.rows.filter({ has: this.page.getByRole('cell', { name, exact: true }) });
  }

  async revoke(name: string) {
    await this.row(name)
      .getByRole('button', { name: /^Revoke/ })
      .click();
    await this.confirmDialog.getByRole('button', { name: 'Revoke key' }).click();
  }
}
