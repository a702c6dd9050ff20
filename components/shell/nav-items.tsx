import {
  BarChartIcon,
  BookIcon,
  BoxIcon,
  ChatIcon,
  ListIcon,
  SettingsIcon,
  SparklesIcon,
  TerminalIcon,
} from '@/components/ui/icons';

/** `section` is the path prefix that marks the item as current; `href` is where it leads. */
export const NAV_ITEMS = [
  { href: '/models', section: '/models', label: 'Models', Icon: BoxIcon },
  { href: '/sft/new', section: '/sft', label: 'Fine-tune', Icon: SparklesIcon },
  { href: '/jobs', section: '/jobs', label: 'Jobs', Icon: ListIcon },
  { href: '/playground', section: '/playground', label: 'Playground', Icon: ChatIcon },
  { href: '/evals', section: '/evals', label: 'Evals', Icon: BarChartIcon },
  { href: '/workers', section: '/workers', label: 'Workers', Icon: TerminalIcon },
  { href: '/settings/api-keys', section: '/settings', label: 'Settings', Icon: SettingsIcon },
  { href: '/docs', section: '/docs', label: 'API docs', Icon: BookIcon },
] as const;

export function isActivePath(pathname: string, href: string): boolean {
  return pathname === href || pathname.startsWith(`${href}/`);
}
