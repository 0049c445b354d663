import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { createMockGateway, type MockGatewayOptions } from '../../src/testing/index.js';

/**
 * A mock on a test-controlled clock, listening for the whole file: after each test it is
 * reset, the clock moves 2 minutes on (a fresh rate window) and spies are restored.
 */
export function clockedMock(options: Omit<MockGatewayOptions, 'now'> = {}) {
  const time = { clock: Date.parse('2026-11-22T08:00:00Z') };
  const now = () => time.clock;
  const mock = createMockGateway({ ...options, now });
  beforeAll(() => mock.listen());
  afterEach(() => {
    mock.reset();
    time.clock += 120_000;
    vi.restoreAllMocks();
  });
  afterAll(() => mock.close());
  return { mock, now, time };
}
