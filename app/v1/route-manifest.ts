import type { RouteEntry } from '@/lib/openapi/build';
import * as apiKey from './api-keys/[key_id]/route';
import * as apiKeys from './api-keys/route';
import * as session from './auth/session/route';
import * as signIn from './auth/sign-in/route';
import * as signOut from './auth/sign-out/route';
import * as signUp from './auth/sign-up/route';
import * as token from './auth/token/route';
import * as health from './health/route';
import * as baseModels from './preview/base-models/route';
import * as datasets from './preview/datasets/route';
import * as checkpoints from './preview/models/[model_id]/checkpoints/route';
import * as history from './preview/models/[model_id]/history/route';
import * as log from './preview/models/[model_id]/log/route';
import * as model from './preview/models/[model_id]/route';
import * as modelJobs from './preview/models/[model_id]/training-jobs/route';
import * as trajectories from './preview/models/[model_id]/trajectories/route';
import * as models from './preview/models/route';
import * as projects from './preview/projects/route';
import * as sftJobs from './preview/sft-training-jobs/route';
import * as events from './preview/training-jobs/[training_job_id]/events/route';
import * as job from './preview/training-jobs/[training_job_id]/route';
import * as rlJobs from './preview/training-jobs/route';
import * as systemCheck from './system-check/route';
import * as member from './teams/[team]/members/[user_id]/route';
import * as members from './teams/[team]/members/route';
import * as teams from './teams/route';
import * as cancel from './preview/training-jobs/[training_job_id]/cancel/route';
import * as workerClaim from './workers/claim/route';
import * as workerCheckpoint from './workers/jobs/[training_job_id]/checkpoint/route';
import * as workerComplete from './workers/jobs/[training_job_id]/complete/route';
import * as workerEvents from './workers/jobs/[training_job_id]/events/route';
import * as workerFail from './workers/jobs/[training_job_id]/fail/route';
import * as workerHeartbeat from './workers/jobs/[training_job_id]/heartbeat/route';
import * as workerInput from './workers/jobs/[training_job_id]/input/route';
import * as workerWeights from './workers/jobs/[training_job_id]/weights/route';

/**
 * Every /v1 route module with its OpenAPI path. tests/api/openapi.test.ts fails when a route file
 * exists on disk but is missing here, so the published document cannot silently fall behind.
 */
export const routeManifest: RouteEntry[] = [
  { path: '/v1/health', module: health },
  { path: '/v1/system-check', module: systemCheck },
  { path: '/v1/preview/models', module: models },
  { path: '/v1/preview/models/{model_id}', module: model },
  { path: '/v1/preview/models/{model_id}/checkpoints', module: checkpoints },
  { path: '/v1/preview/models/{model_id}/log', module: log },
  { path: '/v1/preview/models/{model_id}/history', module: history },
  { path: '/v1/preview/models/{model_id}/trajectories', module: trajectories },
  { path: '/v1/preview/models/{model_id}/training-jobs', module: modelJobs },
  { path: '/v1/preview/training-jobs', module: rlJobs },
  { path: '/v1/preview/sft-training-jobs', module: sftJobs },
  { path: '/v1/preview/training-jobs/{training_job_id}', module: job },
  { path: '/v1/preview/training-jobs/{training_job_id}/events', module: events },
  { path: '/v1/preview/training-jobs/{training_job_id}/cancel', module: cancel },
  { path: '/v1/preview/projects', module: projects },
  { path: '/v1/preview/base-models', module: baseModels },
  { path: '/v1/preview/datasets', module: datasets },
  { path: '/v1/auth/sign-up', module: signUp },
  { path: '/v1/auth/sign-in', module: signIn },
  { path: '/v1/auth/sign-out', module: signOut },
  { path: '/v1/auth/session', module: session },
  { path: '/v1/auth/token', module: token },
  { path: '/v1/api-keys', module: apiKeys },
  { path: '/v1/api-keys/{key_id}', module: apiKey },
  { path: '/v1/teams', module: teams },
  { path: '/v1/teams/{team}/members', module: members },
  { path: '/v1/teams/{team}/members/{user_id}', module: member },
  { path: '/v1/workers/claim', module: workerClaim },
  { path: '/v1/workers/jobs/{training_job_id}/heartbeat', module: workerHeartbeat },
  { path: '/v1/workers/jobs/{training_job_id}/events', module: workerEvents },
  { path: '/v1/workers/jobs/{training_job_id}/input', module: workerInput },
  { path: '/v1/workers/jobs/{training_job_id}/weights', module: workerWeights },
  { path: '/v1/workers/jobs/{training_job_id}/checkpoint', module: workerCheckpoint },
  { path: '/v1/workers/jobs/{training_job_id}/complete', module: workerComplete },
  { path: '/v1/workers/jobs/{training_job_id}/fail', module: workerFail },
];
