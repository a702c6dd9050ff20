import type { Locator, Page } from '@playwright/test';

/** The dashboard frame around every signed-in page (desktop layout). */
export class AppShell {
  readonly sidebar: Locator;
  readonly nav: Locator;
  readonly userEmail: Locator;
  readonly entitySwitcher: Locator;
  readonly signOutButton: Locator;

  constructor(readonly page: Page) {
    this.sidebar = page.locator('aside');
    this.nav = this.sidebar.getByRole('navigation', { name: 'Main' });
    this.userEmail = this.sidebar.getByTestId('user-email');
    this.entitySwitcher = this.sidebar.getByLabel('Entity', { exact: true });
    this.signOutButton = this.sidebar.getByRole('button', { name: 'Sign out' });
  }

  async navigate(label: 'Models' | 'Playground' | 'Settings' | 'API docs') {
    await this.nav.getByRole('link', { name: label }).click();
  }

  async switchEntity(name: string) {
    await this.entitySwitcher.selectOption(name);
  }

  async signOut() {
    await this.signOutButton.click();
  }
}
