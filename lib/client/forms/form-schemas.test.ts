import type { ResolverOptions } from 'react-hook-form';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ApiClientError } from '../api/api-fetch';
import { contractResolver, splitSubmitError } from './form-errors';
import {
  addMemberFormSchema,
  createApiKeyFormSchema,
  createModelFormSchema,
  createTeamFormSchema,
  signInFormSchema,
  signUpFormSchema,
  sftSettingsFormSchema,
} from './form-schemas';

/** What a form shows: the message of each field the resolver flags, as react-hook-form receives it. */
async function check<S extends z.ZodType<unknown, Record<string, string>>>(schema: S, values: z.input<S>) {
  const resolve = contractResolver(schema as z.ZodType<unknown, Record<string, string>>);
  const result = await resolve(values as Record<string, string>, undefined, {
    fields: {},
    shouldUseNativeValidation: false,
  } as ResolverOptions<Record<string, string>>);
  return {
    values: result.values as z.output<S>,
    errors: Object.fromEntries(
      Object.entries(result.errors).map(([field, error]) => [field, (error as { message?: string }).message]),
    ),
  };
}

describe('form schemas over the request bodies', () => {
  it('sign-up: empty optional fields are left out, required ones say what to enter, the body rules word the rest', async () => {
    expect(
      await check(signUpFormSchema, { name: ' ', email: ' A@B.io ', username: '', password: 'long enough' }),
    ).toEqual({ values: { email: 'a@b.io', password: 'long enough' }, errors: {} });
    expect((await check(signUpFormSchema, { name: '', email: '', username: '', password: '' })).errors).toEqual({
      email: 'Enter your email address',
      password: 'Choose a password',
    });
    expect(
      (await check(signUpFormSchema, { name: '', email: 'not-an-email', username: 'Not A Handle', password: 'short' }))
        .errors,
    ).toEqual({
      email: 'Must be an email address',
      username: 'Use lower-case letters, digits, ".", "_" or "-", starting with a letter or digit',
      password: 'Must be at least 8 characters',
    });
  });

  it('sign-in: a password is sent as typed, spaces included', async () => {
    expect(await check(signInFormSchema, { email: 'a@b.io', password: ' pass ' })).toEqual({
      values: { email: 'a@b.io', password: ' pass ' },
      errors: {},
    });
    expect((await check(signInFormSchema, { email: ' ', password: '' })).errors).toEqual({
      email: 'Enter your email address',
      password: 'Enter your password',
    });
  });

  it('API key: the expiry select becomes a number of days, "Never" null', async () => {
    expect((await check(createApiKeyFormSchema, { name: ' ci ', expires_in_days: '30' })).values).toEqual({
      name: 'ci',
      expires_in_days: 30,
    });
    expect((await check(createApiKeyFormSchema, { name: 'ci', expires_in_days: '' })).values).toEqual({
      name: 'ci',
      expires_in_days: null,
    });
    // A tampered select is an error at the field, worded for people.
    expect((await check(createApiKeyFormSchema, { name: '', expires_in_days: 'soon' })).errors).toEqual({
      name: 'Give the key a name, such as the machine or script that will use it',
      expires_in_days: 'Must be a number',
    });
    expect((await check(createApiKeyFormSchema, { name: 'x', expires_in_days: '9999' })).errors).toEqual({
      expires_in_days: 'Must be at most 3650',
    });
  });

  it('teams and members: handles and emails by the body rules', async () => {
    expect((await check(createTeamFormSchema, { name: '' })).errors).toEqual({ name: 'Enter a name for the team' });
    expect((await check(createTeamFormSchema, { name: 'a' })).errors).toEqual({
      name: 'Must be at least 2 characters',
    });
    expect((await check(createTeamFormSchema, { name: ' research ' })).values).toEqual({ name: 'research' });
    expect((await check(addMemberFormSchema, { email: 'X@Y.z', role: 'admin' })).values).toEqual({
      email: 'x@y.z',
      role: 'admin',
    });
    // A tampered select.
    expect((await check(addMemberFormSchema, { email: 'x@y.z', role: 'owner' as 'admin' })).errors).toEqual({
      role: 'Choose one of: admin, member',
    });
  });

  it('create model: a new project must be a slug, an existing one keeps working', async () => {
    const schema = createModelFormSchema(['My Project']);
    expect((await check(schema, { project: 'My Project', name: 'm', base_model: 'b' })).errors).toEqual({});
    expect((await check(schema, { project: 'Other One', name: 'bad/name', base_model: '' })).errors).toEqual({
      project:
        'A new project name must be a slug: use lower-case letters, digits, ".", "_" or "-", starting with a letter or digit',
      name: "Must not contain '/' or ':'",
      base_model: 'Choose a base model',
    });
  });

  it('SFT settings: text becomes the job config, and a bad value is explained at its field', async () => {
    const defaults = {
      model_id: '',
      dataset_name: 'train',
      batch_size: 'auto',
      learning_rate: '',
      epochs: '3',
      validation_split: '0',
      start_from: 'latest',
    };
    expect((await check(sftSettingsFormSchema, defaults)).values).toEqual({
      ...defaults,
      batch_size: 'auto',
      learning_rate: 1e-3,
      epochs: 3,
      validation_split: undefined,
    });
    expect(
      (await check(sftSettingsFormSchema, { ...defaults, learning_rate: '1e-4, 5e-5', validation_split: '0.2' }))
        .values,
    ).toMatchObject({ learning_rate: [1e-4, 5e-5], validation_split: 0.2 });
    expect(
      (
        await check(sftSettingsFormSchema, {
          ...defaults,
          dataset_name: 'a/b',
          batch_size: '0',
          learning_rate: '5',
          epochs: '1001',
        })
      ).errors,
    ).toEqual({
      dataset_name: "Must not contain '/' or ':'",
      batch_size: 'Use "auto" or a whole number of at least 1',
      learning_rate: 'Use a positive number up to 1 such as 5e-5, or a comma-separated list of them',
      epochs: 'Use a whole number from 1 to 1000',
    });
  });
});

describe('splitSubmitError', () => {
  const refused = new ApiClientError(422, 'config.epochs: Too big; training_data_url: Not ready', {
    'config.epochs': 'Too big',
    training_data_url: 'Not ready',
  });

  it('puts a 422 on the field that holds it, under the form’s own name for it, and the rest in one line', () => {
    expect(splitSubmitError(refused, ['epochs'], { rename: { 'config.epochs': 'epochs' } })).toEqual({
      fieldErrors: { epochs: 'Too big' },
      formError: 'training_data_url: Not ready',
    });
    expect(
      splitSubmitError(refused, ['epochs'], { rename: { 'config.epochs': 'epochs' }, namedFields: false }),
    ).toEqual({ fieldErrors: { epochs: 'Too big' }, formError: 'Not ready' });
  });

  it('shows other failures as they are worded', () => {
    expect(splitSubmitError(new ApiClientError(409, 'Email taken'), ['email'])).toEqual({
      fieldErrors: {},
      formError: 'Email taken',
    });
    expect(splitSubmitError(new TypeError('boom'), ['email']).formError).toBe('Something went wrong. Try again.');
  });
});
