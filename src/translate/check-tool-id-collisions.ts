/**
 * Refuses a request in which two different caller tool ids stand for the same upstream id.
 *
 * The tool-id codec decodes each caller id on its own (`tool-id-codec.ts`). The ids it gives the calls of
 * one response always decode to distinct upstream ids (a repeated provider id goes back under the id the
 * caller was shown), but ids a caller makes up can still meet: `tpx_d2eY2FsbF9hYmM` (the second of two
 * `call_abc`) and `tpx_edHB4X2QyZVkyRnNiRjloWW1N` (the encoded form of that very string) both decode to
 * `tpx_d2eY2FsbF9hYmM`, as do an unprefixed id over 200 characters and its encoded form. Sent on, the
 * upstream would see one id twice as two different calls, and could not tell their results apart.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { MessagesRequest } from '../protocol/messages.js';
import { decodeToolId } from './tool-id-codec.js';

interface Claim {
  callerId: string;
  path: string;
}

/**
 * Checks every `tool_use.id` and `tool_result.tool_use_id` of `request.messages`.
 *
 * @throws TransportError `MODEL_EINVAL` naming both ids, where they are, and the upstream id they share.
 */
export function checkToolIdCollisions(request: MessagesRequest): void {
  const claims = new Map<string, Claim>();
  request.messages.forEach((message, messageIndex) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((block, blockIndex) => {
      const record = block as unknown as Record<string, unknown>;
      const callerId =
        block.type === 'tool_use'
          ? record['id']
          : block.type === 'tool_result'
            ? record['tool_use_id']
            : undefined;
      if (typeof callerId !== 'string') return;
      const path = `messages.${messageIndex}.content.${blockIndex}`;
      const upstreamId = decodeToolId(callerId);
      const claim = claims.get(upstreamId);
      if (claim === undefined) {
        claims.set(upstreamId, { callerId, path });
        return;
      }
      if (claim.callerId === callerId) return;
      throw new TransportError(
        'MODEL_EINVAL',
        `${path}: the tool id ${JSON.stringify(callerId)} and ${JSON.stringify(claim.callerId)} ` +
          `(${claim.path}) both stand for the upstream tool-call id ${JSON.stringify(upstreamId)}; ` +
          'the upstream would receive one id for two different calls. Keep the tool ids as they were ' +
          'received, or give each call an id of its own',
      );
    });
  });
}
