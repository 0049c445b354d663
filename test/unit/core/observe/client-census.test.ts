/**
 * src/core/observe/client-census.ts noteClient: a process that builds a client per request
 * (a serverless handler, a request path) is told once, without the api key; reusing one client
 * per merchant stays silent. The module counts per process, so each test loads it afresh.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

async function freshCensus() {
  vi.resetModules();
  return import('../../../../src/core/observe/client-census.js');
}

beforeEach(() => vi.resetModules());

describe('noteClient', () => {
  it('warns once, on the MANY_CLIENTS-th client of one merchant, naming the merchant and the fix', async () => {
    const { noteClient, MANY_CLIENTS } = await freshCensus();
    const lines: string[] = [];
    for (let i = 1; i < MANY_CLIENTS; i++) noteClient('https://api.example.test/', 'M1', (m) => lines.push(m));
    expect(lines).toEqual([]);
    noteClient('https://api.example.test/', 'M1', (m) => lines.push(m));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^20 MyrGateway clients .* merchant M1 at https:\/\/api\.example\.test\/: create one \(at module scope\) and reuse it\.$/,
    );
    for (let i = 0; i < 3 * MANY_CLIENTS; i++) noteClient('https://api.example.test/', 'M1', (m) => lines.push(m));
    expect(lines).toHaveLength(1);
  });

  it('counts each merchant and base URL apart: one client each for many merchants is fine', async () => {
    const { noteClient, MANY_CLIENTS } = await freshCensus();
    const lines: string[] = [];
    for (let i = 0; i < 3 * MANY_CLIENTS; i++)
      noteClient('https://api.example.test/', `OTHER${i}`, (m) => lines.push(m));
    for (let i = 1; i < MANY_CLIENTS; i++) noteClient('https://sandbox.example.test/', 'M1', (m) => lines.push(m));
    for (let i = 1; i < MANY_CLIENTS; i++) noteClient('https://api.example.test/', 'M1', (m) => lines.push(m));
    expect(lines).toEqual([]);
  });
});
