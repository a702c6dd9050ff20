import type { Locator, Page } from '@playwright/test';

export class TeamsPage {
  readonly createForm: Locator;
  readonly teamName: Locator;
  readonly create: Locator;
  readonly cards: Locator;
  readonly confirmDialog: Locator;

  constructor(readonly page: Page) {
    this.createForm = page.getByTestId('create-team-form');
    this.teamName = this.createForm.getByLabel('Team name', { exact: true });
    this.create = this.createForm.getByRole('button', { name: 'Create team' });
    this.cards = page.getByTestId('team-card');
    this.confirmDialog = page.getByRole('dialog');
  }

  async goto() {
    await this.page.goto('/settings/teams');
  }

  card(name: string): Locator {
    return this.page.locator(`[data-testid="team-card"][data-team="${name}"]`);
  }

  async createTeam(name: string) {
    await this.teamName.fill(name);
    await this.create.click();
    await this.card(name).waitFor();
  }

  members(team: string): Locator {
    return this.card(team).getByTestId('team-member-row');
  }

  async addMember(team: string, email: string, role: 'member' | 'admin' = 'member') {
    const form = this.card(team).getByTestId('add-member-form');
    await form.getByLabel('Add member', { exact: true }).fill(email);
    await form.getByLabel('Role', { exact: true }).selectOption(role);
    await form.getByRole('button', { name: 'Add' }).click();
  }

  async removeMember(team: string, email: string) {
    await this.members(team)
      .filter({ hasText: email })
      .getByRole('button', { name: /^Remove/ })
      .click();
    await this.confirmDialog.getByRole('button', { name: 'Remove member' }).click();
  }
}
