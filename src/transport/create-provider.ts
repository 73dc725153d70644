/**
 * The provider a selection names, built once per transport, with every error it raises cleared of the
 * credentials it holds.
 *
 * @module
 */
import { createAnthropicProvider } from '../providers/anthropic.js';
import { noneProvider } from '../providers/none.js';
import type { TransportObserver } from '../providers/observer.js';
import { observeTokenRefresh } from '../providers/observer.js';
import type { Provider } from '../providers/provider.js';
import { createTokenSource } from '../providers/token-source.js';
import { createTpxProvider } from '../providers/tpx.js';
import { DIALECTS } from '../translate/dialects.js';
import { redactValues, withRedactedErrors } from './redact-errors.js';
import type { ResolvedConfig } from './select-provider.js';

export function createProvider(
  config: ResolvedConfig,
  generateId: () => string,
  observer: TransportObserver | undefined,
): Provider {
  switch (config.provider) {
    // Upstreams echo credentials in their error text: no error leaves a provider with one in it.
    case 'anthropic': {
      const anthropic = config.anthropic;
      return withRedactedErrors(createAnthropicProvider(anthropic), redactValues([anthropic.apiKey]));
    }
    case 'tpx': {
      const tpx = config.tpx;
      const tokens = observeTokenRefresh(createTokenSource(tpx.tokenSpec), observer);
      return withRedactedErrors(
        createTpxProvider({
          tokens,
          baseUrl: tpx.baseUrl,
          model: tpx.model,
          generateId,
          dialect: DIALECTS[tpx.dialect],
          azureApiVersion: tpx.azureApiVersion,
          wire: tpx.wire,
          textToolCalls: tpx.textToolCalls,
        }),
        (text) => tokens.redact(text),
      );
    }
    case 'none':
      return noneProvider;
  }
}
