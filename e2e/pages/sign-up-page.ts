import type { Locator, Page } from '@playwright/test';
import type { TestUser } from '../fixtures/users';

export class SignUpPage {
  readonly form: Locator;
  readonly name: Locator;
  readonly email: Locator;
  readonly username: Locator;
  readonly password: Locator;
  readonly submit: Locator;
  readonly error: Locator;

  constructor(readonly page: Page) {
    this.form = page.getByTestId('sign-up-form');
    this.name = this.form.getByLabel('Name', { exact: true });
    this.email = this.form.getByLabel('Email', { exact: true });
    this.username = this.form.getByLabel('Username', { exact: true });
    this.password = this.form.getByLabel('Password', { exact: true });
    this.submit = this.form.getByRole('button', { name: 'Create account' });
    this.error = this.form.getByRole('alert');
  }

  async goto(next?: string) {
    await this.page.goto(next ? `/sign-up?next=${encodeURIComponent(next)}` : '/sign-up');
  }

  async signUp(user: TestUser) {
    await this.name.fill(user.name);
    await this.email.fill(user.email);
    await this.username.fill(user.username);
    await this.password.fill(user.password);
    await this.submit.click();
  }
}
