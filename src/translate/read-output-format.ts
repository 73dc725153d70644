/**
 * `output_config.format` (or its older name `output_format`) → the JSON Schema the answer must follow
 * (docs/translation.md). Pure.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import type { MessagesRequest } from '../protocol/messages.js';
import { invalidRequest } from './invalid-request.js';

/**
 * The schema of the request's structured-output format, or `undefined` when it asks for none.
 *
 * @param equivalent what the wire sends instead, for the refusal: `a Chat Completions equivalent
 *   (response_format)`
 * @throws TransportError `MODEL_EINVAL` when both fields are set and differ, or for a format other than
 *   a JSON schema.
 */
export function readOutputFormat(
  request: MessagesRequest,
  equivalent: string,
): Record<string, unknown> | undefined {
  const [format, fieldName] = outputFormatOf(request);
  if (format === undefined || format === null) return undefined;
  if (!isObject(format) || format['type'] !== 'json_schema') {
    const type = isObject(format) ? JSON.stringify(format['type']) : typeof format;
    invalidRequest(
      `${fieldName} of type ${type} cannot be translated; only {"type": "json_schema", "schema": {…}} ` +
        `has ${equivalent}`,
    );
  }
  const schema = format['schema'];
  if (!isObject(schema)) invalidRequest(`${fieldName}.schema must be a JSON Schema object`);
  return schema;
}

/**
 * The requested output format and the field it came from: `output_config.format`, or the older top-level
 * `output_format` that Anthropic still accepts during its transition (the same shape). Both at once must
 * agree, since neither can be said to win.
 */
function outputFormatOf(request: MessagesRequest): [unknown, string] {
  const current = request.output_config?.format;
  const legacy = request['output_format'];
  const isSet = (value: unknown) => value !== undefined && value !== null;
  if (isSet(current) && isSet(legacy) && JSON.stringify(current) !== JSON.stringify(legacy)) {
    invalidRequest(
      'output_format and output_config.format are both set and differ; send only output_config.format ' +
        '(output_format is its older name)',
    );
  }
  return isSet(current) ? [current, 'output_config.format'] : [legacy, 'output_format'];
}
