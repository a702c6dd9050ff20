import { redirect } from 'next/navigation';

export default async function SettingsIndex({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const entity = (await searchParams).entity;
  redirect(
    typeof entity === 'string' ? `/settings/api-keys?entity=${encodeURIComponent(entity)}` : '/settings/api-keys',
  );
}
