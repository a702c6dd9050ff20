import { z } from 'zod';
import {
  addMemberBodySchema,
  createApiKeyBodySchema,
  createTeamBodySchema,
  signInBodySchema,
  signUpBodySchema,
} from '@/lib/schemas/accounts';
import { createModelBodySchema, NEW_PROJECT_NAME, NEW_PROJECT_NAME_HINT } from '@/lib/schemas/models';
import { uploadDatasetQuerySchema } from '@/lib/schemas/datasets';
import { MAX_LEARNING_RATE, MAX_SFT_EPOCHS, SFT_FORM_DEFAULTS, sftConfigSchema } from '@/lib/schemas/training-jobs';
import { parseBatchSize, parseEpochs, parseLearningRate } from '../sft/sft-dataset';

/*
 * The dashboard's forms, as schemas over what their inputs hold (always strings), each field piped into the field of
 * the request body's own schema: the rules the API checks run in the browser first, with the API's wording, and a
 * form cannot drift from its request. What a form adds is only the step from text to the body's type, and a
 * sentence for a field left empty (which says what to enter, where the body's rule would say what is wrong).
 */

/**
 * `text` (what reads the input's string) piped into the body's `field`, whose rules then run on what it made. Typed
 * loosely on purpose: zod types a pipe's target as taking exactly what its source gives, and a body field often takes
 * more (null, undefined); a value the field does not take is an error shown at the field, not a crash.
 */
function into<T extends z.ZodType>(text: z.ZodType<unknown, string>, field: T): z.ZodType<z.output<T>, string> {
  return text.pipe(field as z.ZodType<unknown>) as unknown as z.ZodType<z.output<T>, string>;
}

/** A required text input: trimmed, `missing` when left empty, then the body field's own rules. */
export function requiredText<T extends z.ZodType>(field: T, missing: string) {
  return into(z.string().trim().min(1, missing), field);
}

/** An optional text input: trimmed, and left out of the body when empty. */
export function optionalText<T extends z.ZodType>(field: T) {
  return into(
    z
      .string()
      .trim()
      .transform((text) => text || undefined),
    field,
  );
}

/** A text input read by a parser that explains what it expects (`{ error }`), then the body field's rules. */
function parsedText<T extends z.ZodType>(parse: (text: string) => { value: unknown } | { error: string }, field: T) {
  const text = z.string().transform((value, ctx) => {
    const parsed = parse(value);
    if ('value' in parsed) return parsed.value;
    ctx.addIssue({ code: 'custom', message: parsed.error });
    return z.NEVER;
  });
  return into(text, field);
}

export const signInFormSchema = signInBodySchema.extend({
  email: requiredText(signInBodySchema.shape.email, 'Enter your email address'),
  // Passwords are sent as typed: spaces may be part of one.
  password: into(z.string().min(1, 'Enter your password'), signInBodySchema.shape.password),
});

export const signUpFormSchema = signUpBodySchema.extend({
  name: optionalText(signUpBodySchema.shape.name),
  email: requiredText(signUpBodySchema.shape.email, 'Enter your email address'),
  username: optionalText(signUpBodySchema.shape.username),
  password: into(z.string().min(1, 'Choose a password'), signUpBodySchema.shape.password),
});

export const createApiKeyFormSchema = createApiKeyBodySchema.extend({
  name: requiredText(
    createApiKeyBodySchema.shape.name,
    'Give the key a name, such as the machine or script that will use it',
  ),
  // The select's "Never" is an empty value: no expiry.
  expires_in_days: into(
    z.string().transform((days) => (days === '' ? null : Number(days))),
    createApiKeyBodySchema.shape.expires_in_days,
  ),
});

export const createTeamFormSchema = createTeamBodySchema.extend({
  name: requiredText(createTeamBodySchema.shape.name, 'Enter a name for the team'),
});

export const addMemberFormSchema = addMemberBodySchema.extend({
  email: requiredText(addMemberBodySchema.shape.email, 'Enter the email of an existing user'),
});

/**
 * The create-model dialog: the entity is where the user is looking, not a field. A project that does not exist yet
 * must be a slug (the API keeps accepting any name segment, for clients and existing projects).
 */
export function createModelFormSchema(existingProjects: readonly string[]) {
  const shape = createModelBodySchema.shape;
  return createModelBodySchema.pick({ project: true, name: true, base_model: true }).extend({
    project: requiredText(shape.project, 'Name the project the model belongs to').refine(
      (project) => existingProjects.includes(project) || NEW_PROJECT_NAME.test(project),
      `A new project name must be a slug: ${NEW_PROJECT_NAME_HINT}`,
    ),
    name: requiredText(shape.name, 'Give the model a name'),
    base_model: into(z.string().min(1, 'Choose a base model'), shape.base_model),
  });
}

const sftConfig = sftConfigSchema.shape;

/**
 * The SFT form's settings, turned into the job's config. An emptied learning rate is the form's default, not the
 * API's (which is for clients that bring their own). The model and the starting point are choices among what the
 * page loaded; the form resolves them.
 */
export const sftSettingsFormSchema = z.object({
  /** Empty: the model the page preselected. */
  model_id: z.string(),
  dataset_name: requiredText(uploadDatasetQuerySchema.shape.name, 'Name the dataset'),
  batch_size: parsedText(parseBatchSize, sftConfig.batch_size),
  learning_rate: parsedText((text) => {
    const parsed = parseLearningRate(text, MAX_LEARNING_RATE);
    return 'error' in parsed ? parsed : { value: parsed.value ?? SFT_FORM_DEFAULTS.learningRate };
  }, sftConfig.learning_rate),
  epochs: parsedText((text) => parseEpochs(text, MAX_SFT_EPOCHS), sftConfig.epochs),
  // The select offers shares; none is no split at all.
  validation_split: into(
    z.string().transform((share) => (Number(share) > 0 ? Number(share) : undefined)),
    sftConfig.validation_split,
  ),
  /** 'latest', 'base' or a step. */
  start_from: z.string(),
});
export type SftSettingsFormValues = z.input<typeof sftSettingsFormSchema>;
