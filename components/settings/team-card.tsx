'use client';

import Link from 'next/link';
import { Avatar } from '@/components/shell/avatar';
import { Badge } from '@/components/ui/badge';
import { Button, buttonClassName } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import type { TeamDto } from '@/lib/schemas/accounts';
import { AddMemberForm, type AddMemberBody } from './add-member-form';
import { ROLE_TONE } from './role-tone';

type Member = TeamDto['members'][number];

interface TeamCardProps {
  team: TeamDto;
  currentUserId: string;
  modelsHref: string;
  onAddMember: (body: AddMemberBody) => Promise<unknown>;
  onRemoveMember: (member: Member) => void;
}

export function TeamCard({ team, currentUserId, modelsHref, onAddMember, onRemoveMember }: TeamCardProps) {
  const canManage = team.role === 'owner' || team.role === 'admin';
  return (
    <Card data-testid="team-card" data-team={team.name} aria-labelledby={`team-${team.id}`}>
      <header className="flex flex-wrap items-center justify-between gap-3 border-b border-line px-5 py-4">
        <div className="flex min-w-0 items-center gap-3">
          <Avatar name={team.name} square />
          <div className="min-w-0">
            <h3 id={`team-${team.id}`} className="flex items-center gap-2 text-[15px] font-semibold text-fg">
              <span className="truncate">{team.name}</span>
              <Badge tone={ROLE_TONE[team.role]}>{team.role}</Badge>
            </h3>
            <p className="text-xs text-fg-subtle">
              {team.members.length} member{team.members.length === 1 ? '' : 's'} · created{' '}
              <RelativeTime iso={team.created_at} />
            </p>
          </div>
        </div>
        <Link href={modelsHref} className={buttonClassName({ variant: 'secondary', size: 'sm' })}>
          View models
        </Link>
      </header>
      <Table>
        <caption className="sr-only">Members of {team.name}</caption>
        <thead>
          <tr>
            <Th>Member</Th>
            <Th>Role</Th>
            <Th>
              <span className="sr-only">Actions</span>
            </Th>
          </tr>
        </thead>
        <tbody>
          {team.members.map((member) => {
            const self = member.user_id === currentUserId;
            const removable = member.role !== 'owner' && (self || canManage);
            return (
              <Tr key={member.user_id} data-testid="team-member-row">
                <Td>
                  <div className="flex items-center gap-3">
                    <Avatar name={member.name || member.email} className="size-7 text-[10px]" />
                    <div className="min-w-0">
                      <div className="truncate font-medium text-fg">
                        {member.name}
                        {self ? <span className="ml-1.5 text-xs font-normal text-fg-subtle">(you)</span> : null}
                      </div>
                      <div className="truncate text-xs text-fg-subtle">{member.email}</div>
                    </div>
                  </div>
                </Td>
                <Td>
                  <Badge tone={ROLE_TONE[member.role]}>{member.role}</Badge>
                </Td>
                <Td className="text-right">
                  {removable ? (
                    <Button
                      variant="danger-ghost"
                      size="sm"
                      onClick={() => onRemoveMember(member)}
                      data-testid="remove-member"
                    >
                      {self ? 'Leave team' : 'Remove'}
                      {self ? null : <span className="sr-only"> {member.email}</span>}
                    </Button>
                  ) : null}
                </Td>
              </Tr>
            );
          })}
        </tbody>
      </Table>
      {canManage ? (
        <div className="border-t border-line bg-surface-muted/40 px-5 py-4">
          <AddMemberForm team={team.name} onSubmit={onAddMember} />
        </div>
      ) : null}
    </Card>
  );
}
