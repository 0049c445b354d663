// Compile-time and lint checks (npm run typecheck, npm run lint): the documented Node pattern,
// createServer(createNodeHandler(…)), passes a merchant's typed lint (typescript-eslint's
// no-misused-promises, in recommendedTypeChecked) and tsc --strict, with no wrapper and no cast.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createExpressMiddleware, createNodeHandler } from '../../src/webhooks/index.js';

declare const apiKey: string;

const server = createServer(createNodeHandler({ verifier: { apiKey }, onEvent: () => {} }));
server.listen(3000);

// A plain listener: node:http ignores what a listener returns, so it returns nothing to ignore.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const listener = createNodeHandler({ verifier: { apiKey }, onEvent: () => {} });
const returnsVoid: Equals<ReturnType<typeof listener>, void> = true;
export const middleware = createExpressMiddleware({ verifier: { apiKey }, onEvent: () => {} });
const middlewareReturnsVoid: Equals<ReturnType<typeof middleware>, void> = true;
const asListener: (req: IncomingMessage, res: ServerResponse) => void = listener;

export { asListener, middlewareReturnsVoid, returnsVoid };
