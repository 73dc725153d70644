import { it } from 'vitest';
import { createTransport } from '../../src/index.js';
import { startScriptedServer, step, helloRequest } from '../helpers/scripted-server.js';
it('probe', async () => {
  const base = process.getActiveResourcesInfo();
  console.log('base', base);
  const server = await startScriptedServer([step.noHeaders()]);
  const t = createTransport({ env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url }, maxRetries: 0, firstByteTimeoutMs: 150 });
  await t.send(helloRequest()).catch((e) => console.log(e.code));
  await t.close(); await server.close();
  const start = Date.now();
  for (let i = 0; i < 15; i++) { console.log(Date.now() - start, process.getActiveResourcesInfo().join(',')); await new Promise(r => setTimeout(r, 100)); }
});
