/**
 * The refusals request translation raises: a `MODEL_EINVAL` error whose message names the field and its
 * position, so a caller can see what to change.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import { blockPath, type PositionedBlock } from './check-pairing.js';

/**
 * Refuses a request that asks for something the wire cannot express.
 *
 * @throws TransportError `MODEL_EINVAL` with `message`, always.
 */
export function invalidRequest(message: string): never {
  throw new TransportError('MODEL_EINVAL', message);
}

/**
 * Refuses a content block of a type that has no form on the wire, naming where it is.
 *
 * @param wireName the wire as the refusal names it: `Chat Completions`, `the Responses API`
 * @throws TransportError `MODEL_EINVAL`, always.
 */
export function untranslatableBlock(positioned: PositionedBlock, wireName: string): never {
  invalidRequest(
    `${blockPath(positioned)}: a ${JSON.stringify(positioned.block.type)} block cannot be translated to ` +
      `${wireName}; remove it, or use the anthropic provider`,
  );
}

/**
 * Refuses a conversation that leaves nothing to send: its only message was a blank prefill, which is
 * dropped.
 *
 * @throws TransportError `MODEL_EINVAL`, always.
 */
export function nothingToSend(): never {
  invalidRequest('messages holds nothing to send: its only message is a blank assistant message');
}
