/**
 * Validates outbound Chat Completions request bodies against the vendored OpenAI schema
 * (`test/schemas/openai-chat-completions.schema.json`, see `test/schemas/SOURCE.md`).
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';

const SCHEMA_PATH = new URL('../schemas/openai-chat-completions.schema.json', import.meta.url);
const SCHEMA_ID = 'openai-chat-completions.schema.json';

// ajv-formats is CommonJS: under NodeNext the default import is `module.exports`, whose `default` is
// the plugin itself.
const addFormats = formatsModule.default;

let validator: ValidateFunction | undefined;

function requestValidator(): ValidateFunction {
  if (validator !== undefined) return validator;
  // The schema carries OpenAPI annotations (`x-*`, `discriminator`, `example`): non-strict mode ignores them.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  // The spec's own custom format on `created` (responses only); accept any value.
  ajv.addFormat('unixtime', true);
  ajv.addSchema(JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as object);
  const compiled = ajv.getSchema(`${SCHEMA_ID}#/definitions/CreateChatCompletionRequest`);
  if (compiled === undefined) throw new Error('CreateChatCompletionRequest not found in the vendored schema');
  validator = compiled;
  return compiled;
}

function describe(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 20)
    .map(
      (error) =>
        `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'} ${JSON.stringify(error.params)}`,
    )
    .join('\n');
}

/**
 * Throws unless `body` is a valid `CreateChatCompletionRequest` per the vendored OpenAI schema. The error
 * message lists Ajv's errors (at most 20).
 */
export function assertValidChatCompletionRequest(body: unknown): void {
  const validate = requestValidator();
  if (!validate(body)) {
    throw new Error(`not a valid Chat Completions request:\n${describe(validate.errors)}`);
  }
}
