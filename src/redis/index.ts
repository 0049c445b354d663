/**
 * `myr-gateway/redis`: the stores that make a fleet of processes behave like one
 * client: a shared access token ({@link RedisTokenStore}) and an exactly-once callback
 * ledger ({@link RedisWebhookStore}), and one rate budget ({@link RedisRateLimiter}).
 * Bring your own ioredis or node-redis client (one server, Sentinel or Cluster); this
 * subpath loads neither.
 *
 * @module
 */
export { type RedisClientLike, type RedisStoreOptions } from './client.js';
export { MINIMUM_REDIS_VERSION, MINIMUM_VALKEY_VERSION, RedisStoreError, RedisVersionError } from './errors.js';
export { RedisTokenStore, type RedisTokenStoreOptions } from './token-store.js';
export { RedisWebhookStore } from './webhook-store.js';
export { type RedisWebhookStoreOptions } from './webhook-ledger-options.js';
export { RedisRateLimiter, type RedisRateLimiterOptions } from './rate-limiter.js';
