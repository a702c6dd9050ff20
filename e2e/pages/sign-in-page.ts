import type { Locator, Page } from '@playwright/test';

export class SignInPage {
  readonly form: Locator;
  readonly email: Locator;
  readonly password: Locator;
  readonly submit: Locator;
  readonly error: Locator;

  constructor(readonly page: Page) {
    this.form = page.getByTestId('sign-in-form');
    this.email = this.form.getByLabel('Email', { exact: true });
    this.password = this.form.getByLabel('Password', { exact: true });
    this.submit = this.form.getByRole('button', { name: 'Sign in' });
    this.error = this.form.getByRole('alert');
  }

  async goto() {
    await this.page.goto('/sign-in');
  }

  async signIn(email: string, password: string) {
    await this.email.fill(email);
    await this.password.fill(password);
    await this.submit.click();
  }
}
