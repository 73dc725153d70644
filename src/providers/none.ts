/**
 * The `none` provider: no credentials were present at start-up, so every exchange fails at once with
 * `MODEL_EAUTH` (401), with no network I/O.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { Provider } from './provider.js';

const MESSAGE =
  'no model credentials are configured: set ANTHROPIC_API_KEY to use Anthropic, or TPX_OAUTH_TOKEN (or TPX_OAUTH_TOKEN_FILE) together with TPX_BASE_URL to use an OpenAI-compatible endpoint';

function noCredentials(): TransportError {
  return new TransportError('MODEL_EAUTH', MESSAGE, { provider: 'none' });
}

export const noneProvider: Provider = {
  name: 'none',
  send() {
    return Promise.reject(noCredentials());
  },
  // eslint-disable-next-line require-yield
  async *stream() {
    throw noCredentials();
  },
  countTokens() {
    return Promise.reject(noCredentials());
  },
  listModels() {
    return Promise.reject(noCredentials());
  },
};
