import type { z } from 'zod';
import { INT_EXPECTED } from '@/lib/schemas/common';
import type { ValidationIssue } from './index';

type Location = 'body' | 'query' | 'path' | 'header';

function quote(values: readonly unknown[]): string {
  const items = values.map((v) => `'${String(v)}'`);
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/**
 * Translates zod issues into the pydantic v2 `type`/`msg` pairs real clients and FastAPI users know
 * (docs/contract.md §1.5). Query values arrive as strings, hence the `*_parsing` types there.
 */
export function zodIssuesToValidation(error: z.ZodError, location: Location): ValidationIssue[] {
  return error.issues.map((issue) => {
    const loc = [location, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    const hasInput = 'input' in issue;
    const input = hasInput ? (issue as { input?: unknown }).input : undefined;
    const withInput = (item: ValidationIssue): ValidationIssue => (hasInput ? { ...item, input } : item);
    switch (issue.code) {
      case 'invalid_type': {
        if (!hasInput || input === undefined) return { loc, msg: 'Field required', type: 'missing' };
        const fromString = typeof input === 'string';
        // zod says `expected: "number"` for a non-number given to z.int(); jsonInt() marks those (see there).
        const expected = issue.message === INT_EXPECTED ? 'int' : issue.expected;
        switch (expected) {
          case 'int':
            if (typeof input === 'number')
              return withInput({
                loc,
                msg: 'Input should be a valid integer, got a number with a fractional part',
                type: 'int_from_float',
              });
            return withInput(
              fromString
                ? {
                    loc,
                    msg: 'Input should be a valid integer, unable to parse string as an integer',
                    type: 'int_parsing',
                  }
                : { loc, msg: 'Input should be a valid integer', type: 'int_type' },
            );
          case 'number':
            return withInput(
              fromString
                ? {
                    loc,
                    msg: 'Input should be a valid number, unable to parse string as a number',
                    type: 'float_parsing',
                  }
                : { loc, msg: 'Input should be a valid number', type: 'float_type' },
            );
          case 'boolean':
            return withInput(
              fromString
                ? { loc, msg: 'Input should be a valid boolean, unable to interpret input', type: 'bool_parsing' }
                : { loc, msg: 'Input should be a valid boolean', type: 'bool_type' },
            );
          case 'string':
            return withInput({ loc, msg: 'Input should be a valid string', type: 'string_type' });
          case 'array':
            return withInput({ loc, msg: 'Input should be a valid list', type: 'list_type' });
          case 'object':
          case 'record':
            return withInput({ loc, msg: 'Input should be a valid dictionary', type: 'dict_type' });
          default:
            return withInput({ loc, msg: `Input should be a valid ${issue.expected}`, type: `${issue.expected}_type` });
        }
      }
      case 'invalid_format':
        if (issue.format === 'uuid' || issue.format === 'guid')
          return withInput({
            loc,
            msg: 'Input should be a valid UUID, invalid character or length',
            type: 'uuid_parsing',
          });
        return withInput({ loc, msg: `Input should be a valid ${issue.format}`, type: 'string_pattern_mismatch' });
      case 'too_big':
        if (issue.origin === 'string')
          return withInput({
            loc,
            msg: `String should have at most ${issue.maximum} characters`,
            type: 'string_too_long',
          });
        if (issue.origin === 'array')
          return withInput({ loc, msg: `List should have at most ${issue.maximum} items`, type: 'too_long' });
        return withInput(
          issue.inclusive
            ? { loc, msg: `Input should be less than or equal to ${issue.maximum}`, type: 'less_than_equal' }
            : { loc, msg: `Input should be less than ${issue.maximum}`, type: 'less_than' },
        );
      case 'too_small':
        if (issue.origin === 'string')
          return withInput({
            loc,
            msg: `String should have at least ${issue.minimum} characters`,
            type: 'string_too_short',
          });
        if (issue.origin === 'array')
          return withInput({ loc, msg: `List should have at least ${issue.minimum} items`, type: 'too_short' });
        return withInput(
          issue.inclusive
            ? { loc, msg: `Input should be greater than or equal to ${issue.minimum}`, type: 'greater_than_equal' }
            : { loc, msg: `Input should be greater than ${issue.minimum}`, type: 'greater_than' },
        );
      case 'invalid_value':
        return withInput({ loc, msg: `Input should be ${quote(issue.values)}`, type: 'enum' });
      case 'invalid_union':
        return withInput({ loc, msg: 'Input does not match any of the accepted shapes', type: 'union_tag_invalid' });
      default:
        return withInput({ loc, msg: `Value error, ${issue.message}`, type: 'value_error' });
    }
  });
}
