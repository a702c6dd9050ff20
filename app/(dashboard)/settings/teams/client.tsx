'use client';

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { TeamCard } from '@/components/settings/team-card';
import { TeamCreateForm } from '@/components/settings/team-create-form';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { EmptyState } from '@/components/ui/empty-state';
import { UsersIcon } from '@/components/ui/icons';
import { Skeleton } from '@/components/ui/skeleton';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { useAddTeamMember, useCreateTeam, useRemoveTeamMember } from '@/lib/client/queries/mutations';
import { teamsQuery } from '@/lib/client/queries/accounts';
import type { TeamDto } from '@/lib/schemas/accounts';

type Member = TeamDto['members'][number];

interface TeamsClientProps {
  currentUserId: string;
  defaultEntity: string;
}

export function TeamsClient({ currentUserId, defaultEntity }: TeamsClientProps) {
  const teams = useQuery(teamsQuery());
  const [toRemove, setToRemove] = useState<{ team: string; member: Member } | null>(null);
  const createTeam = useCreateTeam();
  const addMember = useAddTeamMember();
  const removeMember = useRemoveTeamMember(currentUserId);

  const list = teams.data?.data ?? [];
  const leaving = toRemove?.member.user_id === currentUserId;

  return (
    <div className="flex flex-col gap-6">
      <Card aria-labelledby="create-team-title">
        <CardHeader
          id="create-team-title"
          title="Create a team"
          description="Teams own models together. You become the team’s owner and can add members."
        />
        <CardBody>
          <TeamCreateForm onSubmit={(body) => createTeam.mutateAsync(body)} />
        </CardBody>
      </Card>

      <section aria-labelledby="teams-title" className="flex flex-col gap-4">
        <h2 id="teams-title" className="text-[15px] font-semibold text-fg">
          Your teams
        </h2>
        {teams.isPending ? (
          <Card aria-busy="true" aria-label="Loading teams">
            <CardBody className="flex flex-col gap-3">
              <Skeleton className="h-5 w-1/3" />
              <Skeleton className="h-5 w-2/3" />
            </CardBody>
          </Card>
        ) : teams.isError ? (
          <RetryAlert title="Could not load your teams" onRetry={() => teams.refetch()}>
            {teams.error.message}
          </RetryAlert>
        ) : list.length === 0 ? (
          <Card>
            <EmptyState
              icon={<UsersIcon className="size-5" />}
              title="You are not in any team yet"
              description="Create a team above, or ask a team admin to add you with your email address."
            />
          </Card>
        ) : (
          list.map((team) => (
            <TeamCard
              key={team.id}
              team={team}
              currentUserId={currentUserId}
              modelsHref={hrefWithEntity('/models', team.name, defaultEntity)}
              onAddMember={(body) => addMember.mutateAsync({ team: team.name, body })}
              onRemoveMember={(member) => setToRemove({ team: team.name, member })}
            />
          ))
        )}
      </section>

      <ConfirmDialog
        open={toRemove !== null}
        title={leaving ? `Leave ${toRemove?.team ?? ''}?` : `Remove ${toRemove?.member.email ?? ''}?`}
        description={
          leaving
            ? 'You will lose access to the team’s models. An admin can add you again.'
            : `They will lose access to ${toRemove?.team ?? 'the team'}’s models. You can add them again later.`
        }
        confirmLabel={leaving ? 'Leave team' : 'Remove member'}
        pending={removeMember.isPending}
        error={removeMember.error?.message}
        onConfirm={() => toRemove && removeMember.mutate(toRemove, { onSuccess: () => setToRemove(null) })}
        onCancel={() => {
          setToRemove(null);
          removeMember.reset();
        }}
      />
    </div>
  );
}
