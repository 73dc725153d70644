/**
 * Thinking signatures across upstreams. On the Responses wire a thinking block's signature carries the
 * upstream's encrypted reasoning (`tpxr1.…`, see `translate/reasoning-signature-codec.ts`), which only the
 * service that made it can read: another one refuses the whole request. With routes a conversation may
 * cross upstreams from turn to turn, so the signature also says which upstream made it — statelessly, in
 * the signature itself — and each request is cleared of the reasoning other upstreams made:
 *
 * | signature in the caller's request           | sent to upstream `X` as |
 * |---------------------------------------------|-------------------------|
 * | `tpxu1.X.<tpxr1…>` (made by `X`)            | `<tpxr1…>`: the reasoning item is restored |
 * | `tpxu1.Y.<tpxr1…>` (made by another)        | `""`: the item is dropped; the thinking text stays, as Chat Completions servers get it |
 * | `tpxr1.…` without an origin                 | `""`, as above: where it came from is unknown |
 * | anything else (`""`, Anthropic's own)       | unchanged: it carries nothing an upstream would check |
 *
 * The format is `tpxu1.` + upstream name + `.` + the signature; upstream names hold no `.`.
 *
 * @module
 */
import type { Message, MessagesRequest, MessageStreamEvent } from '../../protocol/messages.js';

const ORIGIN_PREFIX = 'tpxu1.';
const REASONING_PREFIX = 'tpxr1.';

/** `signature` marked as made by `upstream`, when it carries reasoning; else unchanged. */
export function markSignature(signature: string, upstream: string): string {
  return signature.startsWith(REASONING_PREFIX) ? `${ORIGIN_PREFIX}${upstream}.${signature}` : signature;
}

/** The signature as `upstream` may receive it (see the module comment's table). */
export function signatureFor(signature: string, upstream: string): string {
  if (signature.startsWith(ORIGIN_PREFIX)) {
    const rest = signature.slice(ORIGIN_PREFIX.length);
    const dot = rest.indexOf('.');
    return dot !== -1 && rest.slice(0, dot) === upstream ? rest.slice(dot + 1) : '';
  }
  return signature.startsWith(REASONING_PREFIX) ? '' : signature;
}

/** A thinking block's signature, when `block` is one that has a string signature. */
function signatureOf(block: unknown): string | undefined {
  if (typeof block !== 'object' || block === null) return undefined;
  const { type, signature } = block as { type?: unknown; signature?: unknown };
  return type === 'thinking' && typeof signature === 'string' ? signature : undefined;
}

/** `request` as `upstream` may receive it: the same object when nothing changes. */
export function requestFor(request: MessagesRequest, upstream: string): MessagesRequest {
  let changed = false;
  const messages = request.messages.map((message) => {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) return message;
    let changedHere = false;
    const content = message.content.map((block: unknown) => {
      const signature = signatureOf(block);
      if (signature === undefined) return block;
      const sent = signatureFor(signature, upstream);
      if (sent === signature) return block;
      changedHere = true;
      return { ...(block as object), signature: sent };
    });
    if (!changedHere) return message;
    changed = true;
    return { ...message, content } as typeof message;
  });
  return changed ? { ...request, messages } : request;
}

/** `message` with its reasoning signatures marked as made by `upstream`. */
export function markMessage(message: Message, upstream: string): Message {
  if (!message.content.some((block) => signatureOf(block)?.startsWith(REASONING_PREFIX) === true)) {
    return message;
  }
  const content = message.content.map((block) => {
    const signature = signatureOf(block);
    return signature === undefined ? block : { ...block, signature: markSignature(signature, upstream) };
  });
  return { ...message, content };
}

/** Marks, in place, the reasoning signatures a batch of stream events carries as made by `upstream`. */
export function markEvents(batch: MessageStreamEvent[], upstream: string): void {
  for (const event of batch) {
    if (event.type === 'content_block_start') {
      const signature = signatureOf(event.content_block);
      if (signature !== undefined && signature !== '') {
        (event.content_block as { signature: string }).signature = markSignature(signature, upstream);
      }
    } else if (event.type === 'content_block_delta' && event.delta.type === 'signature_delta') {
      const delta = event.delta as { signature: string };
      delta.signature = markSignature(delta.signature, upstream);
    }
  }
}
