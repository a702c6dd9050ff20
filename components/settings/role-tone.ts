import type { BadgeTone } from '@/components/ui/badge';

export const ROLE_TONE: Record<'owner' | 'admin' | 'member', BadgeTone> = {
  owner: 'accent',
  admin: 'info',
  member: 'neutral',
};
