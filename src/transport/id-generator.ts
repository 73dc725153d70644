/**
 * Fresh ids, cheaply: a random per-generator prefix (so two processes — two proxy replicas — never
 * produce the same id) followed by a counter. One `randomBytes` call per generator instead of one per
 * id keeps id generation off the per-exchange profile. The ids are unique, not secret.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';

/** Returns a function producing distinct `[A-Za-z0-9_-]+` ids. */
export function createIdGenerator(randomPrefixBytes = 12): () => string {
  const prefix = randomBytes(randomPrefixBytes).toString('base64url');
  let counter = 0;
  return () => `${prefix}${(counter++).toString(36)}`;
}
