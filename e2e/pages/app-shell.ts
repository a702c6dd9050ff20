import { expect, type Locator, type Page } from '@playwright/test';

/** The dashboard frame around every signed-in page (desktop layout). */
export class AppShell {
  readonly sidebar: Locator;
  readonly nav: Locator;
  readonly userEmail: Locator;
  readonly entitySwitcher: Locator;
  readonly signOutButton: Locator;
  readonly palette: Locator;
  readonly paletteInput: Locator;
  readonly paletteOptions: Locator;
  readonly shortcutsDialog: Locator;

  constructor(readonly page: Page) {
    this.sidebar = page.locator('aside');
    this.nav = this.sidebar.getByRole('navigation', { name: 'Main' });
    this.userEmail = this.sidebar.getByTestId('user-email');
    this.entitySwitcher = this.sidebar.getByLabel('Entity', { exact: true });
    this.signOutButton = this.sidebar.getByRole('button', { name: 'Sign out' });
    this.palette = page.getByTestId('command-palette');
    this.paletteInput = page.getByRole('combobox', { name: 'Search pages, entities, projects and models' });
    this.paletteOptions = page.getByTestId('command-option');
    this.shortcutsDialog = page.getByTestId('shortcuts-dialog');
  }

  async navigate(label: 'Models' | 'Playground' | 'Settings' | 'API docs') {
    await this.nav.getByRole('link', { name: label }).click();
  }

  async switchEntity(name: string) {
    await this.entitySwitcher.selectOption(name);
  }

  /** Opens the quick switcher with Ctrl+K (Chromium on Linux). */
  async openPalette() {
    // Right after a navigation the page may not be hydrated yet, and a shortcut pressed then is lost: press
    // until the switcher is open.
    await expect(async () => {
      if (!(await this.palette.isVisible())) await this.page.keyboard.press('Control+k');
      await expect(this.palette).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 15_000 });
  }

  /** Opens the shortcuts list with `?`, pressed until it opens (see openPalette; `?` never closes it). */
  async openShortcuts() {
    await expect(async () => {
      if (!(await this.shortcutsDialog.isVisible())) await this.page.locator('body').press('?');
      await expect(this.shortcutsDialog).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 15_000 });
  }

  paletteOption(label: string): Locator {
    return this.paletteOptions.filter({ hasText: label });
  }

  async signOut() {
    await this.signOutButton.click();
  }
}
