/**
 * Framework adapters over the one exactly-once handler. None imports its framework at
 * runtime: types are structural, so the package has no dependency on any of them.
 *
 * @module
 */
export type { WebhookAdapterInput, WebhookAdapterOptions, NodeRequestLike } from './shared.js';
export { createNodeHandler } from './node.js';
export { createExpressMiddleware } from './express.js';
export {
  createFastifyHandler,
  fastifyWebhookPlugin,
  type FastifyInstanceLike,
  type FastifyReplyLike,
  type FastifyRequestLike,
  type FastifyWebhookPluginOptions,
} from './fastify.js';
export { createHonoHandler, type HonoContextLike } from './hono.js';
export { createKoaMiddleware, type KoaContextLike, type KoaWebhookOptions } from './koa.js';
export { createWebHandler } from './web.js';
