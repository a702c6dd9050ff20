import { routeEntries, type RouteEntry } from '@/lib/openapi/build';
import { tinkerRoutes } from '../api/v1/route-manifest';
import * as apiKey from './api-keys/[key_id]/route';
import * as apiKeys from './api-keys/route';
import * as session from './auth/session/route';
import * as signIn from './auth/sign-in/route';
import * as signOut from './auth/sign-out/route';
import * as signUp from './auth/sign-up/route';
import * as token from './auth/token/route';
import * as health from './health/route';
import * as baseModels from './preview/base-models/route';
import * as compare from './preview/compare/route';
import * as datasets from './preview/datasets/route';
import * as checkpoints from './preview/models/[model_id]/checkpoints/route';
import * as checkpointDownload from './preview/models/[model_id]/checkpoints/[step]/download/route';
import * as history from './preview/models/[model_id]/history/route';
import * as abVotes from './preview/models/[model_id]/ab-votes/route';
import * as log from './preview/models/[model_id]/log/route';
import * as model from './preview/models/[model_id]/route';
import * as modelJobs from './preview/models/[model_id]/training-jobs/route';
import * as trajectories from './preview/models/[model_id]/trajectories/route';
import * as trajectorySteps from './preview/models/[model_id]/trajectory-steps/route';
import * as models from './preview/models/route';
import * as projects from './preview/projects/route';
import * as sftJobs from './preview/sft-training-jobs/route';
import * as sftTiming from './preview/sft-training-jobs/timing/route';
import * as events from './preview/training-jobs/[training_job_id]/events/route';
import * as job from './preview/training-jobs/[training_job_id]/route';
import * as rlJobs from './preview/training-jobs/route';
import * as systemCheck from './system-check/route';
import * as member from './teams/[team]/members/[user_id]/route';
import * as members from './teams/[team]/members/route';
import * as teams from './teams/route';
import * as chat from './chat/completions/route';
import * as usage from './usage/route';
import * as openaiModels from './models/route';
import * as cancel from './preview/training-jobs/[training_job_id]/cancel/route';
import * as resubmit from './preview/training-jobs/[training_job_id]/resubmit/route';
import * as trainingWorkers from './preview/training-workers/route';
import * as workerClaim from './workers/claim/route';
import * as workerSignOff from './workers/sign-off/route';
import * as workerCheckpoint from './workers/jobs/[training_job_id]/checkpoint/route';
import * as workerComplete from './workers/jobs/[training_job_id]/complete/route';
import * as workerEvents from './workers/jobs/[training_job_id]/events/route';
import * as workerFail from './workers/jobs/[training_job_id]/fail/route';
import * as workerHeartbeat from './workers/jobs/[training_job_id]/heartbeat/route';
import * as workerInput from './workers/jobs/[training_job_id]/input/route';
import * as workerWeights from './workers/jobs/[training_job_id]/weights/route';
import * as tinkerPoll from './workers/tinker/poll/route';
import * as tinkerHeartbeat from './workers/tinker/heartbeat/route';
import * as tinkerResult from './workers/tinker/requests/[request_id]/result/route';
import * as tinkerFiles from './workers/tinker/requests/[request_id]/files/[file]/route';
import * as tinkerClients from './preview/tinker-training-clients/route';
import * as modelTinker from './preview/models/[model_id]/tinker/route';
import * as autoEval from './preview/models/[model_id]/auto-eval/route';
import * as evalSets from './preview/eval-sets/route';
import * as evalSet from './preview/eval-sets/[eval_set_id]/route';
import * as evalExamples from './preview/eval-sets/[eval_set_id]/examples/route';
import * as evalRuns from './preview/eval-runs/route';
import * as evalRun from './preview/eval-runs/[eval_run_id]/route';
import * as evalRunCancel from './preview/eval-runs/[eval_run_id]/cancel/route';
import * as evalRunEvents from './preview/eval-runs/[eval_run_id]/events/route';
import * as evalRunResults from './preview/eval-runs/[eval_run_id]/results/route';
import * as evalRunScores from './preview/eval-runs/[eval_run_id]/scores/route';

/**
 * Every /v1 route module, each under the path its own `methods()` registered (routeEntries): a route's path is
 * written once, in its file. tests/api/openapi.test.ts fails when a route file exists on disk but is missing here, or
 * when the path a file registers is not its folder's, so the published document cannot silently fall behind.
 */
export const routeManifest: RouteEntry[] = [
  ...routeEntries([
    health,
    chat,
    usage,
    openaiModels,
    systemCheck,
    models,
    model,
    checkpoints,
    checkpointDownload,
    log,
    history,
    compare,
    autoEval,
    evalSets,
    evalSet,
    evalExamples,
    evalRuns,
    evalRun,
    evalRunCancel,
    evalRunEvents,
    evalRunResults,
    evalRunScores,
    abVotes,
    trajectories,
    trajectorySteps,
    modelJobs,
    rlJobs,
    sftJobs,
    sftTiming,
    job,
    events,
    cancel,
    resubmit,
    trainingWorkers,
    projects,
    baseModels,
    datasets,
    signUp,
    signIn,
    signOut,
    session,
    token,
    apiKeys,
    apiKey,
    teams,
    members,
    member,
    workerClaim,
    workerSignOff,
    workerHeartbeat,
    workerEvents,
    workerInput,
    workerWeights,
    workerCheckpoint,
    workerComplete,
    workerFail,
    tinkerPoll,
    tinkerHeartbeat,
    tinkerResult,
    tinkerFiles,
    tinkerClients,
    modelTinker,
  ]),
  ...tinkerRoutes,
];
