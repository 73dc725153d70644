import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import {
  DEFAULT_AZURE_API_VERSION,
  DIALECTS,
  DIALECT_NAMES,
  chatCompletionsUrl,
  detectDialect,
  modelsUrl,
  parseDialectName,
} from './dialects.js';

describe('detectDialect', () => {
  it.each([
    ['https://api.openai.com/v1', 'openai'],
    ['https://api.deepseek.com', 'deepseek'],
    ['https://api.deepseek.com/v1', 'deepseek'],
    ['https://api.mistral.ai/v1', 'mistral'],
    ['https://api.moonshot.ai/v1', 'kimi'],
    ['https://api.moonshot.cn/v1', 'kimi'],
    ['https://api.groq.com/openai/v1', 'groq'],
    ['https://openrouter.ai/api/v1', 'openrouter'],
    ['https://generativelanguage.googleapis.com/v1beta/openai', 'gemini'],
    ['https://my-resource.openai.azure.com', 'azure'],
    ['https://MY-RESOURCE.OPENAI.AZURE.COM/openai/deployments/gpt-4o', 'azure'],
    [
      'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/endpoints/openapi',
      'vertex',
    ],
    ['https://aiplatform.googleapis.com/v1/projects/p/locations/global/endpoints/openapi', 'vertex'],
    ['https://ollama.com/v1', 'ollama'],
  ])('detects %s as %s', (baseUrl, dialect) => {
    expect(detectDialect(baseUrl)).toBe(dialect);
  });

  it.each([
    'http://127.0.0.1:8000/v1',
    'http://localhost:11434/v1',
    'https://llm.internal.example/v1',
    'https://api.openai.com.evil.example/v1',
    'https://openai.azure.com.example/v1',
    'not a url',
  ])('leaves %s undetected (the generic profile applies)', (baseUrl) => {
    expect(detectDialect(baseUrl)).toBeUndefined();
  });
});

describe('parseDialectName', () => {
  it('accepts every listed name, ignoring case and surrounding blanks', () => {
    for (const name of DIALECT_NAMES) {
      expect(parseDialectName(` ${name.toUpperCase()} `, 'TPX_DIALECT')).toBe(name);
    }
  });

  it('refuses an unknown name with MODEL_ECONFIG naming the source and listing the valid names', () => {
    let thrown: unknown;
    try {
      parseDialectName('bedrock', 'TPX_DIALECT');
    } catch (error) {
      thrown = error;
    }
    expect(isTransportError(thrown) && thrown.code).toBe('MODEL_ECONFIG');
    const message = (thrown as Error).message;
    expect(message).toContain('TPX_DIALECT');
    expect(message).toContain('"bedrock"');
    for (const name of DIALECT_NAMES) expect(message).toContain(name);
  });
});

describe('every profile', () => {
  it('is frozen and named after its key', () => {
    for (const name of DIALECT_NAMES) {
      expect(DIALECTS[name].name).toBe(name);
      expect(Object.isFrozen(DIALECTS[name])).toBe(true);
    }
  });

  it('uses max_completion_tokens for openai and azure only', () => {
    const completionTokens = DIALECT_NAMES.filter(
      (name) => DIALECTS[name].maxTokensField === 'max_completion_tokens',
    );
    expect(completionTokens).toEqual(['openai', 'azure']);
  });
});

describe('chatCompletionsUrl', () => {
  const model = 'gpt-4o prod';

  it('appends /chat/completions to the base URL for base-shaped dialects', () => {
    for (const name of DIALECT_NAMES.filter((candidate) => DIALECTS[candidate].endpoint === 'base')) {
      expect(chatCompletionsUrl(DIALECTS[name], { baseUrl: 'http://127.0.0.1:8000/v1', model })).toBe(
        'http://127.0.0.1:8000/v1/chat/completions',
      );
    }
  });

  it.each([
    [
      'https://res.openai.azure.com',
      `https://res.openai.azure.com/openai/deployments/gpt-4o%20prod/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`,
    ],
    [
      'https://res.openai.azure.com/openai',
      `https://res.openai.azure.com/openai/deployments/gpt-4o%20prod/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`,
    ],
    [
      'https://res.openai.azure.com/openai/deployments/chat-east',
      `https://res.openai.azure.com/openai/deployments/chat-east/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`,
    ],
    ['https://res.openai.azure.com/openai/v1', 'https://res.openai.azure.com/openai/v1/chat/completions'],
    [
      'http://127.0.0.1:9000/azure',
      `http://127.0.0.1:9000/azure/openai/deployments/gpt-4o%20prod/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`,
    ],
  ])('builds the Azure URL for the base %s', (baseUrl, expected) => {
    expect(chatCompletionsUrl(DIALECTS.azure, { baseUrl, model })).toBe(expected);
  });

  it('uses the configured Azure api-version, encoded', () => {
    expect(
      chatCompletionsUrl(DIALECTS.azure, {
        baseUrl: 'https://res.openai.azure.com',
        model: 'gpt-4o',
        azureApiVersion: '2025-04-01-preview',
      }),
    ).toBe(
      'https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2025-04-01-preview',
    );
  });

  it.each([
    [
      'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1',
      'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/endpoints/openapi/chat/completions',
    ],
    [
      'https://aiplatform.googleapis.com/v1/projects/p/locations/global/endpoints/openapi',
      'https://aiplatform.googleapis.com/v1/projects/p/locations/global/endpoints/openapi/chat/completions',
    ],
  ])('builds the Vertex URL for the base %s', (baseUrl, expected) => {
    expect(chatCompletionsUrl(DIALECTS.vertex, { baseUrl, model })).toBe(expected);
  });
});

describe('modelsUrl', () => {
  it('lists Azure models at the resource, with the api-version', () => {
    expect(
      modelsUrl(DIALECTS.azure, {
        baseUrl: 'https://res.openai.azure.com/openai/deployments/chat-east',
        model: 'x',
      }),
    ).toBe(`https://res.openai.azure.com/openai/models?api-version=${DEFAULT_AZURE_API_VERSION}`);
  });

  it('lists models next to the chat endpoint elsewhere', () => {
    expect(modelsUrl(DIALECTS.mistral, { baseUrl: 'https://api.mistral.ai/v1', model: 'x' })).toBe(
      'https://api.mistral.ai/v1/models',
    );
  });
});

describe('dialect URLs and names: edge cases', () => {
  it('detects OpenRouter on its subdomains, and nothing on a host that only starts like one', () => {
    expect(detectDialect('https://eu.openrouter.ai/api/v1')).toBe('openrouter');
    expect(detectDialect('https://openrouter.ai.example.com/v1')).toBeUndefined();
    expect(detectDialect('not a url')).toBeUndefined();
  });

  it('names the valid dialects when refusing a name', () => {
    expect(() => parseDialectName('gpt', 'TPX_DIALECT')).toThrow(
      `TPX_DIALECT is "gpt", which is not a known dialect; use one of: ${DIALECT_NAMES.join(', ')}`,
    );
    expect(parseDialectName(' Mistral ', 'TPX_DIALECT')).toBe('mistral');
  });

  it('builds Azure model-list and chat URLs from a resource, a deployment, the v1 API, or a path ending in openai', () => {
    const options = (baseUrl: string) => ({ baseUrl, model: 'my deployment', azureApiVersion: '2024-10-21' });
    const azure = DIALECTS.azure;
    expect(modelsUrl(azure, options('https://r.openai.azure.com/'))).toBe(
      'https://r.openai.azure.com/openai/models?api-version=2024-10-21',
    );
    expect(modelsUrl(azure, options('https://r.openai.azure.com/openai/deployments/d1'))).toBe(
      'https://r.openai.azure.com/openai/models?api-version=2024-10-21',
    );
    expect(modelsUrl(azure, options('https://r.openai.azure.com/openai/v1'))).toBe(
      'https://r.openai.azure.com/openai/v1/models',
    );
    expect(modelsUrl(azure, options('https://r.openai.azure.com/openai/v1/extra'))).toBe(
      'https://r.openai.azure.com/openai/v1/extra/openai/models?api-version=2024-10-21',
    );
    expect(chatCompletionsUrl(azure, options('https://r.openai.azure.com/openai'))).toBe(
      'https://r.openai.azure.com/openai/deployments/my%20deployment/chat/completions?api-version=2024-10-21',
    );
    expect(chatCompletionsUrl(azure, options('https://r.openai.azure.com/openai/deployments/d1/x'))).toBe(
      'https://r.openai.azure.com/openai/deployments/d1/x/openai/deployments/my%20deployment/chat/completions?api-version=2024-10-21',
    );
    expect(chatCompletionsUrl(azure, options('https://r.openai.azure.com/openai/v1/x'))).toBe(
      'https://r.openai.azure.com/openai/v1/x/openai/deployments/my%20deployment/chat/completions?api-version=2024-10-21',
    );
    expect(modelsUrl(azure, options('https://r.openai.azure.com//'))).toBe(
      'https://r.openai.azure.com/openai/models?api-version=2024-10-21',
    );
  });
});
