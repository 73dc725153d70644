/**
 * The refusals request translation raises: a `MODEL_EINVAL` error whose message names the field and its
 * position, so a caller can see what to change.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import { blockPath, type PositionedBlock } from './check-pairing.js';

/**
 * Refuses a request that asks for something Chat Completions cannot express.
 *
 * @throws TransportError `MODEL_EINVAL` with `message`, always.
 */
export function invalidRequest(message: string): never {
  throw new TransportError('MODEL_EINVAL', message);
}

/**
 * Refuses a content block of a type that has no Chat Completions form, naming where it is.
 *
 * @throws TransportError `MODEL_EINVAL`, always.
 */
export function untranslatableBlock(positioned: PositionedBlock): never {
  invalidRequest(
    `${blockPath(positioned)}: a ${JSON.stringify(positioned.block.type)} block cannot be translated to ` +
      'Chat Completions; remove it, or use the anthropic provider',
  );
}
