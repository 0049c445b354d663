// workerd entry: a module Worker bundled from the installed package. It serves the Web
// handler at /webhooks/myr and runs the checks on POST /run, sending the handler's
// requests back through its own service binding (env.SELF) so workerd dispatches them.
/* global URL, Response */
import * as sdk from 'myr-gateway';
import * as webhooks from 'myr-gateway/webhooks';
import { conformanceWebHandler, runConformance } from './conformance.mjs';

let state = null;

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === '/run' && request.method === 'POST') {
      const input = await request.json();
      const runs = [];
      state = { runs, handler: conformanceWebHandler(webhooks, input.apiKey, runs) };
      const post = (init) => env.SELF.fetch('http://worker/webhooks/myr', init);
      const report = await runConformance({ sdk, webhooks, input, runs, post });
      return Response.json({ runtime: { name: 'workerd', version: null }, ...report });
    }
    if (pathname === '/webhooks/myr' && state) return state.handler(request);
    return new Response('not found', { status: 404 });
  },
};
