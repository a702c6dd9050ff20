import { routeEntries, type RouteEntry } from '@/lib/openapi/build';
import * as tinkerArchivesToken from './archives/[token]/route';
import * as tinkerAsample from './asample/route';
import * as tinkerCheckpoints from './checkpoints/route';
import * as tinkerClientConfig from './client/config/route';
import * as tinkerClientDynamicConfig from './client/dynamic_config/route';
import * as tinkerCreateModel from './create_model/route';
import * as tinkerCreateSamplingSession from './create_sampling_session/route';
import * as tinkerCreateSession from './create_session/route';
import * as tinkerForward from './forward/route';
import * as tinkerForwardBackward from './forward_backward/route';
import * as tinkerGetInfo from './get_info/route';
import * as tinkerGetServerCapabilities from './get_server_capabilities/route';
import * as tinkerHealthz from './healthz/route';
import * as tinkerLoadWeights from './load_weights/route';
import * as tinkerOptimStep from './optim_step/route';
import * as tinkerRetrieveFuture from './retrieve_future/route';
import * as tinkerSamplersSamplerId from './samplers/[sampler_id]/route';
import * as tinkerSaveWeights from './save_weights/route';
import * as tinkerSaveWeightsForSampler from './save_weights_for_sampler/route';
import * as tinkerSessionHeartbeat from './session_heartbeat/route';
import * as tinkerTelemetry from './telemetry/route';
import * as tinkerTrainingRuns from './training_runs/route';
import * as tinkerTrainingRunsModelId from './training_runs/[model_id]/route';
import * as tinkerTrainingRunsModelIdCheckpoints from './training_runs/[model_id]/checkpoints/route';
import * as tinkerTrainingRunsModelIdCheckpointsTypeName from './training_runs/[model_id]/checkpoints/[type]/[name]/route';
import * as tinkerTrainingRunsModelIdCheckpointsTypeNameArchive from './training_runs/[model_id]/checkpoints/[type]/[name]/archive/route';
import * as tinkerUnloadModel from './unload_model/route';
import * as tinkerWeightsInfo from './weights_info/route';

/**
 * The Tinker SDK's routes (docs/tinker.md §2), part of the /v1 route manifest (app/v1/route-manifest.ts): the OpenAPI
 * document lists them under the `tinker` tag, and tests/api/openapi.test.ts checks that none is missing.
 */
export const tinkerRoutes: RouteEntry[] = routeEntries([
  tinkerArchivesToken,
  tinkerAsample,
  tinkerCheckpoints,
  tinkerClientConfig,
  tinkerClientDynamicConfig,
  tinkerCreateModel,
  tinkerCreateSamplingSession,
  tinkerCreateSession,
  tinkerForward,
  tinkerForwardBackward,
  tinkerGetInfo,
  tinkerGetServerCapabilities,
  tinkerHealthz,
  tinkerLoadWeights,
  tinkerOptimStep,
  tinkerRetrieveFuture,
  tinkerSamplersSamplerId,
  tinkerSaveWeights,
  tinkerSaveWeightsForSampler,
  tinkerSessionHeartbeat,
  tinkerTelemetry,
  tinkerTrainingRuns,
  tinkerTrainingRunsModelId,
  tinkerTrainingRunsModelIdCheckpoints,
  tinkerTrainingRunsModelIdCheckpointsTypeName,
  tinkerTrainingRunsModelIdCheckpointsTypeNameArchive,
  tinkerUnloadModel,
  tinkerWeightsInfo,
]);
