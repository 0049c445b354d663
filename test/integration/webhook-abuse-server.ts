/**
 * The server side of webhook-abuse.test.ts, in its own process so that its RSS is a clean
 * figure: every app in which the adapter (or the framework's own bounded parser) reads the
 * body, on 127.0.0.1; answers 'rss' messages with its current and peak resident memory.
 * Apps with a merchant's parser in front (express.json(), a Koa body parser, `c.req.json()`
 * in Hono) are bounded by that parser, not by the adapter: docs/webhooks.md says so.
 */
import { WebhookVerifier, createWebhookHandler } from '../../src/webhooks/index.js';
import { API_KEY, NOW } from '../fixtures/webhook-vectors-helpers.js';
import { apps } from './webhook-apps.js';

const verifier = new WebhookVerifier({ apiKey: API_KEY, clock: () => NOW });
const urls: Record<string, string> = {};
const PARSER_IN_FRONT = /express\.(json|raw|text)\(\)|earlier middleware|koa, (parsed|rawBody)/;
for (const [name, start] of Object.entries(apps)) {
  if (PARSER_IN_FRONT.test(name)) continue;
  urls[name] = (await start(createWebhookHandler({ verifier, onEvent: () => {} }))).url;
}

// The peak is sampled here from the first 'rss' question on, not taken from the process's
// maxRSS: that one counts start-up (tsx compiling the apps), which a steady server never
// returns to, so it read as growth the adapters did not cause.
let peak = 0;
let sampling: ReturnType<typeof setInterval> | undefined;
const sample = () => {
  peak = Math.max(peak, process.memoryUsage.rss());
};

process.on('message', (message) => {
  if (message !== 'rss') return;
  sample();
  const seen = peak;
  (globalThis as { gc?: () => void }).gc?.();
  const rss = process.memoryUsage.rss();
  peak = rss;
  sampling ??= setInterval(sample, 2);
  sampling.unref();
  process.send?.({ rss, peak: Math.max(seen, rss) });
});
process.on('disconnect', () => process.exit(0));
process.send?.({ urls });
