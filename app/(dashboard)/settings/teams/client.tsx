'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import type { AddMemberInput } from '@/components/settings/add-member-form';
import { TeamCard } from '@/components/settings/team-card';
import { TeamCreateForm } from '@/components/settings/team-create-form';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { EmptyState } from '@/components/ui/empty-state';
import { UsersIcon } from '@/components/ui/icons';
import { Skeleton } from '@/components/ui/skeleton';
import { apiFetch } from '@/lib/client/api-fetch';
import { hrefWithEntity } from '@/lib/client/entity';
import { memberRemovedSchema } from '@/lib/schemas/accounts';
import { queryKeys, teamsQuery } from '@/lib/client/query-keys';
import { teamSchema, type TeamDto } from '@/lib/schemas/accounts';

type Member = TeamDto['members'][number];

interface TeamsClientProps {
  currentUserId: string;
  defaultEntity: string;
}

export function TeamsClient({ currentUserId, defaultEntity }: TeamsClientProps) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const teams = useQuery(teamsQuery());
  const [toRemove, setToRemove] = useState<{ team: string; member: Member } | null>(null);

  // Team changes alter the user's entities, which the server-rendered shell lists: refresh it too.
  async function afterMembershipChange() {
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: queryKeys.teams.all() }),
      queryClient.invalidateQueries({ queryKey: queryKeys.session() }),
    ]);
    router.refresh();
  }

  const createTeam = useMutation({
    mutationFn: (input: { name: string }) => apiFetch('/v1/teams', teamSchema, { method: 'POST', json: input }),
    onSuccess: afterMembershipChange,
  });

  const addMember = useMutation({
    mutationFn: ({ team, input }: { team: string; input: AddMemberInput }) =>
      apiFetch(`/v1/teams/${encodeURIComponent(team)}/members`, teamSchema, { method: 'POST', json: input }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.teams.all() }),
  });

  const removeMember = useMutation({
    mutationFn: ({ team, member }: { team: string; member: Member }) =>
      apiFetch(
        `/v1/teams/${encodeURIComponent(team)}/members/${encodeURIComponent(member.user_id)}`,
        memberRemovedSchema,
        {
          method: 'DELETE',
        },
      ),
    onSuccess: async (_result, { member }) => {
      if (member.user_id === currentUserId) await afterMembershipChange();
      else await queryClient.invalidateQueries({ queryKey: queryKeys.teams.all() });
      setToRemove(null);
    },
  });

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
          <TeamCreateForm
            pending={createTeam.isPending}
            error={createTeam.error}
            onSubmit={(input, done) => createTeam.mutate(input, { onSuccess: done })}
          />
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
              addPending={addMember.isPending && addMember.variables?.team === team.name}
              addError={addMember.variables?.team === team.name ? addMember.error : null}
              onAddMember={(input, done) => addMember.mutate({ team: team.name, input }, { onSuccess: done })}
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
        onConfirm={() => toRemove && removeMember.mutate(toRemove)}
        onCancel={() => {
          setToRemove(null);
          removeMember.reset();
        }}
      />
    </div>
  );
}
