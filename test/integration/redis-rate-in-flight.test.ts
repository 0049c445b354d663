/**
 * A slot is scored, while its request is out, with the latest time that request can still reach
 * the service (its call's deadline: two minutes by default), and rescored with its answer's
 * time once answered. So a window full of requests just sent looks, by its scores, as if it
 * frees minutes from now. What the fleet makes of such slots:
 * - a process that has not heard the service itself waits for their answers: the one request it
 *   may send to hear the service is for shared state that holds it back longer than the
 *   published minute (a hostile limit or window), and would land in a full window, a 429;
 * - but a slot someone else scored far ahead, with a limit far below the service's, holds such
 *   a process back for about `PROBE_HOLD_MS` of its calls' waiting (however short each call's
 *   deadline): it then hears the service and writes its limit back;
 * - the spec's minute, measured a little over a minute, is no long hold, and no contradiction;
 * - a refusal's `retryAfter` says when the window frees after their answers, not after their
 *   calls' deadlines (the payout worker waits it).
 * Through the public client, on a real redis-server with both clients, against a real HTTP
 * service that can answer a while after counting.
 */
import { describe, expect, it } from 'vitest';
import { type MyrGateway, RateLimitError } from '../../src/index.js';
import { PROBE_HOLD_MS } from '../../src/redis/rate-scripts.js';
import { paymentParams } from '../helpers/client.js';
import { type FleetProcess, paymentKeys, redisPacingHarness } from '../helpers/redis-pacing-harness.js';
import { CLIENT_KINDS, type ClientKind } from '../helpers/redis.js';

const harness = redisPacingHarness();
const LIMIT = 5;
/** The service's window: the shortest a limiter believes, so the test waits little. */
const WINDOW_MS = 1000;
/** How long the service holds each answer after counting its request. */
const HOLD_MS = 1500;

let n = 0;

const fleetProcess = (kind: ClientKind, keyPrefix: string) => harness.fleetProcess(kind, keyPrefix);
// The default deadline (two minutes): what scores a slot in flight.
const create = (gateway: MyrGateway, ref: string) => gateway.payments.create({ ...paymentParams(), reference_id: ref });

describe.each(CLIENT_KINDS)('requests of the fleet in flight, on %s', (kind) => {
  it('a process new to the limits waits for the answers of a window full of requests in flight: no 429', async () => {
    const service = await harness.startService(LIMIT, WINDOW_MS);
    const keyPrefix = `inflight${++n}${kind}:`;
    // One process has heard the service (the limit and window are in Redis), and its one slot
    // has left the learned window (at most the service's window rounded up to a whole second).
    const warm = await fleetProcess(kind, keyPrefix);
    await create(warm.gateway, 'WARM');
    await new Promise((resolve) => setTimeout(resolve, 2 * WINDOW_MS + 200));

    // It fills the window with requests the service counts at once and answers 1.5 s later.
    service.holdAnswers(HOLD_MS);
    const filling = Array.from({ length: LIMIT }, (_, i) => create(warm.gateway, `FILL${i}`));
    await expect.poll(() => service.creates.filter((c) => c.ref.startsWith('FILL')).length).toBe(LIMIT);

    // A process that has heard nothing yet wants one slot while all of them are out.
    const fresh = await fleetProcess(kind, keyPrefix);
    const late = create(fresh.gateway, 'FRESH');
    const [fills, freshPayment] = await Promise.all([Promise.all(filling), late]);

    expect(fills).toHaveLength(LIMIT);
    expect(freshPayment.reference_id).toBe('FRESH');
    const at = (c: { at: number; status: number; ref: string }) => `${c.ref}:${c.status}`;
    expect(service.creates.filter((c) => c.status === 429).map(at)).toEqual([]);
    // It went out once the window's requests were answered and their window had passed.
    const freshSent = service.creates.filter((c) => c.ref === 'FRESH');
    const lastFill = Math.max(...service.creates.filter((c) => c.ref.startsWith('FILL')).map((c) => c.at));
    expect(freshSent).toHaveLength(1);
    expect((freshSent[0]?.at ?? 0) - lastFill).toBeGreaterThanOrEqual(HOLD_MS);
    expect([...warm.warnings, ...fresh.warnings]).toEqual([]);
  }, 30_000);

  it("against the spec's minute window (measured a little over a minute: whole-second resets err long), a process new to the limits waits for the answers of a window full of requests in flight: no 429", async () => {
    const service = await harness.startService(LIMIT, 60_000);
    const keyPrefix = `inflightminute${++n}${kind}:`;
    const warm = await fleetProcess(kind, keyPrefix);
    // The slow-start probe, sent just after a whole second, as any request may be: its answer,
    // alone in its window, has the fleet measure the window (reset rounded up to the second).
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    await create(warm.gateway, 'WARM');
    const keys = await paymentKeys(warm.send, keyPrefix);
    await expect.poll(async () => Number(await warm.send(['HGET', keys.cfg, 'window']))).toBeGreaterThan(60_000);
    // A minute later (stand-ins, not to wait it): the service's window and the fleet's have passed.
    service.reset();
    await warm.send(['DEL', keys.slots]);

    // The warm process fills the window with requests the service counts at once and answers 1.5 s later.
    service.holdAnswers(HOLD_MS);
    const filling = Array.from({ length: LIMIT }, (_, i) => create(warm.gateway, `FILL${i}`));
    await expect.poll(() => service.creates.filter((c) => c.ref.startsWith('FILL')).length).toBe(LIMIT);

    // A process that has heard nothing yet wants one slot while all of them are out.
    const fresh = await fleetProcess(kind, keyPrefix);
    // The service's window stays full for a minute: it may only wait (and is refused in the end).
    const late = fresh.gateway.payments
      .create({ ...paymentParams(), reference_id: 'FRESH' }, { totalTimeout: 4000 })
      .then(
        () => 'created',
        (e: unknown) => (e instanceof RateLimitError ? 'RATE_LIMITED' : String(e)),
      );
    const [fills, outcome] = await Promise.all([Promise.all(filling), late]);
    expect(fills).toHaveLength(LIMIT);
    const at = (c: { at: number; status: number; ref: string }) => `${c.ref}:${c.status}`;
    expect(service.creates.filter((c) => c.status === 429).map(at)).toEqual([]);
    expect(outcome).toBe('RATE_LIMITED');
  }, 30_000);

  it("against the spec's minute window, a process that heard the service but was never alone in its window takes the fleet's measured window (a little over a minute) for no contradiction: no warning, no LEARN per answer", async () => {
    const service = await harness.startService(LIMIT, 60_000);
    const keyPrefix = `minuteseen${++n}${kind}:`;
    const warm = await fleetProcess(kind, keyPrefix);
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    await create(warm.gateway, 'WARM');
    const keys = await paymentKeys(warm.send, keyPrefix);
    await expect.poll(async () => Number(await warm.send(['HGET', keys.cfg, 'window']))).toBeGreaterThan(60_000);

    // Its first answer (Remaining 3 of 5) tells it the limit, not the window: its own stays the published minute.
    const q = await fleetProcess(kind, keyPrefix);
    await create(q.gateway, 'Q0');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Each LEARN renews the hash's TTL to an hour: a shorter one renewed tells a LEARN ran.
    let learns = 0;
    for (const ref of ['Q1', 'Q2']) {
      await q.send(['PEXPIRE', keys.cfg, '1000000']);
      await create(q.gateway, ref);
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (Number(await q.send(['PTTL', keys.cfg])) > 2_000_000) learns++;
    }
    expect(service.creates.map((c) => c.status)).toEqual([200, 200, 200, 200]);
    expect({ learns, warnings: q.warnings }).toEqual({ learns: 0, warnings: [] });
  }, 30_000);

  it("a refusal while the window is full of requests in flight gives a retryAfter of about a window after their answers, not after their calls' deadlines", async () => {
    const service = await harness.startService(2, WINDOW_MS);
    const keyPrefix = `retryafter${++n}${kind}:`;
    const p = await fleetProcess(kind, keyPrefix);
    await create(p.gateway, 'WARM');
    const keys = await paymentKeys(p.send, keyPrefix);
    // No edge probe: the window must stay full.
    await p.send(['HSET', keys.cfg, 'edge', 'done']);
    await new Promise((resolve) => setTimeout(resolve, 2 * WINDOW_MS + 200));

    service.holdAnswers(HOLD_MS);
    const filling = [create(p.gateway, 'FILL0'), create(p.gateway, 'FILL1')];
    await expect.poll(() => service.creates.length).toBe(3);
    const refused = await p.gateway.payments.create(paymentParams(), { totalTimeout: 500 }).catch((e: unknown) => e);
    await Promise.all(filling);
    expect(refused).toBeInstanceOf(RateLimitError);
    // The learned window (at most 2 s) frees about 1.5 s and a window from now: not two minutes.
    expect((refused as RateLimitError).retryAfter).toBeLessThanOrEqual(5);
  }, 30_000);
});

/** A process that heard the service (10 per 4 s) on a service of this test, its key prefix, and the keys its first create wrote. */
async function warmFleet(kind: ClientKind, label: string) {
  const service = await harness.startService(10, 4000);
  const keyPrefix = `${label}${++n}${kind}:`;
  const warm = await fleetProcess(kind, keyPrefix);
  await create(warm.gateway, 'WARM');
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { service, keyPrefix, warm, keys: await paymentKeys(warm.send, keyPrefix) };
}

/**
 * What someone else may write: a limit of 1 in the hash (only the limit: the window stays the
 * one the fleet measured, 4 s, legitimate) and a well-formed slot scored 30 min ahead.
 */
async function forgeLimitAndSlot(warm: FleetProcess, keys: { cfg: string; slots: string }) {
  await warm.send(['HSET', keys.cfg, 'limit', '1']);
  await warm.send([
    'ZADD',
    keys.slots,
    String(Math.floor(Date.now() + 1_800_000)),
    '2c4e28ba-2fa1-11d2-883f-0016d3cca427:1',
  ]);
}

// Each of these waits about 10 s, so each runs on one client: the rule is the script's, the same
// on both, and both run the cases above.
describe("a limit written into the hash far below the service's, each case on one client", () => {
  it('limit 1 in the hash and a well-formed slot scored 30 min ahead, the window as measured: a new process is held back PROBE_HOLD_MS at most, then hears the service and keeps creating, on ioredis', async () => {
    const kind: ClientKind = 'ioredis';
    const { service, keyPrefix, warm, keys } = await warmFleet(kind, 'hostileslot');
    await forgeLimitAndSlot(warm, keys);

    const fresh = await fleetProcess(kind, keyPrefix);
    const started = Date.now();
    const results = await Promise.allSettled(
      Array.from({ length: 3 }, (_, i) => fresh.gateway.payments.create({ ...paymentParams(), reference_id: `F${i}` })),
    );
    expect(results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))).toEqual([]);
    expect(service.creates.filter((c) => c.status === 429)).toEqual([]);
    // Its first create went out once it had waited PROBE_HOLD_MS, not after the slot's 30 min.
    const firstSent = Math.min(...service.creates.filter((c) => c.ref.startsWith('F')).map((c) => c.at));
    expect(firstSent - started).toBeLessThan(PROBE_HOLD_MS + 3000);
    // The request it sent to hear the service wrote the service's limit back for the fleet.
    expect(await warm.send(['HGET', keys.cfg, 'limit'])).toBe('10');
  }, 40_000);

  it('limit 1 in the hash and a well-formed slot scored 30 min ahead: a new process whose calls each may wait less than PROBE_HOLD_MS (the payout worker gives each request 10 s by default) still hears the service within about PROBE_HOLD_MS, on node-redis', async () => {
    const kind: ClientKind = 'node-redis';
    const { service, keyPrefix, warm, keys } = await warmFleet(kind, 'hostileshort');
    await forgeLimitAndSlot(warm, keys);

    // The new process keeps asking, one call after the other, each given 5 s (below PROBE_HOLD_MS).
    const fresh = await fleetProcess(kind, keyPrefix);
    const started = Date.now();
    const outcomes: string[] = [];
    for (let i = 0; i < 5 && !outcomes.includes('created'); i++) {
      outcomes.push(
        await fresh.gateway.payments.create({ ...paymentParams(), reference_id: `S${i}` }, { totalTimeout: 5000 }).then(
          () => 'created',
          (e: unknown) => (e instanceof RateLimitError ? 'RATE_LIMITED' : String(e)),
        ),
      );
    }
    // Held back by the forged slot for ~10 s of the process's waiting, not for the slot's 30 min.
    expect(outcomes).toContain('created');
    const firstSent = Math.min(...service.creates.filter((c) => c.ref.startsWith('S')).map((c) => c.at));
    expect(firstSent - started).toBeLessThan(PROBE_HOLD_MS + 6000);
    expect(service.creates.filter((c) => c.status === 429)).toEqual([]);
  }, 60_000);

  it("limit 1 in the hash while a warm process keeps requests in flight: it writes the service's limit back, and a new process gets a slot while the fleet is busy, on ioredis", async () => {
    const kind: ClientKind = 'ioredis';
    const { service, keyPrefix, warm, keys } = await warmFleet(kind, 'hostilebusy');

    // The warm process keeps one request out at all times for 12 s, each answered 1 s after counting.
    service.holdAnswers(1000);
    let busy = true;
    let i = 0;
    const loop = (async () => {
      const stopAt = Date.now() + 12_000;
      while (Date.now() < stopAt) await create(warm.gateway, `BUSY${i++}`);
      busy = false;
    })();
    await expect.poll(() => service.creates.length, { timeout: 5000 }).toBeGreaterThan(2);
    // No edge probe either: only the hash's limit decides whether the new process gets a slot.
    await warm.send(['HSET', keys.cfg, 'limit', '1', 'edge', 'done']);

    const fresh = await fleetProcess(kind, keyPrefix);
    const result = await fresh.gateway.payments
      .create({ ...paymentParams(), reference_id: 'FRESH' }, { totalTimeout: 6000 })
      .then(
        () => 'created',
        (e: unknown) => String(e),
      );
    const whileBusy = busy;
    await loop;
    expect(result).toBe('created');
    expect(whileBusy).toBe(true);
    expect(service.creates.filter((c) => c.status === 429)).toEqual([]);
    expect(await warm.send(['HGET', keys.cfg, 'limit'])).toBe('10');
    expect(warm.warnings.filter((w) => /contradicts/.test(w))).toHaveLength(1);
  }, 40_000);
});
