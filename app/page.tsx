import { redirect } from 'next/navigation';
import { DEFAULT_SIGNED_IN_PATH } from '@/lib/client/navigation/redirect-target';
import { currentPrincipal } from './_lib/session';

export default async function Home() {
  redirect((await currentPrincipal()) ? DEFAULT_SIGNED_IN_PATH : '/sign-in');
}
