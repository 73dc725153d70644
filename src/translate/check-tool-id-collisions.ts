/**
 * Refuses a request in which two different caller tool ids stand for the same upstream id.
 *
 * The tool-id codec decodes each caller id on its own (`tool-id-codec.ts`), and some distinct caller ids
 * decode to one provider id: `call_abc` and `tpx_d2eY2FsbF9hYmM` (the form a repeated `call_abc` was
 * given) both decode to `call_abc`, and a caller may send both. Sent on, the upstream would see one id
 * twice as two different calls, and could not tell their results apart.
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
