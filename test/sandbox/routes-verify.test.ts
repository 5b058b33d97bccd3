/** GET /api/v1/verify: deterministic statuses, one unit per 200 per key, nothing for errors. */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/sandbox/dataset/index.js';
import {
  call,
  qs,
  SANDBOX_KEYS,
  startTestSandbox,
  TEST_AS_OF,
  testDataset,
  todayUtc,
  withSandbox,
  type TestSandbox,
} from '../helpers/sandbox.js';

let sandbox: TestSandbox;
let ds: Dataset;
beforeAll(async () => {
  sandbox = await startTestSandbox();
  ds = testDataset();
});
afterAll(() => sandbox.close());

const verify = (email: string | undefined, key: string = SANDBOX_KEYS.growth) =>
  call(sandbox.url, `/api/v1/verify?${qs({ email })}`, { key });

describe('verify', () => {
  it('answers the contract shape and counts one unit per 200, per key, in the header and /_sandbox/stats', async () => {
    const before = sandbox.stats().units;
    const first = await verify('someone@example.com');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      data: {
        email: 'someone@example.com',
        status: expect.stringMatching(/^(valid|invalid|risky|unknown)$/),
        checked_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
      },
      meta: { units_charged: 1, units_used: before.growth + 1 },
    });
    expect(first.body.data.checked_at.startsWith(TEST_AS_OF)).toBe(true);
    expect(first.headers['x-units-used']).toBe(String(before.growth + 1));
    const second = await verify('other@example.com');
    expect(second.headers['x-units-used']).toBe(String(before.growth + 2));
    const free = await verify('someone@example.com', SANDBOX_KEYS.free);
    expect(free.status).toBe(200);
    expect(free.headers['x-units-used']).toBe(String(before.free + 1));
    const after = sandbox.stats().units;
    expect(after).toEqual({ ...before, growth: before.growth + 2, free: before.free + 1 });
    const http = await call(sandbox.url, '/_sandbox/stats');
    expect(http.body.units).toEqual(after);
  });

  it('charges nothing for errors (missing, malformed, repeated, unauthenticated)', async () => {
    const before = sandbox.stats().units;
    for (const bad of [undefined, '', 'not-an-email', 'a@b', 'two@@example.com', 'x@-bad-.com']) {
      const res = await verify(bad);
      expect(res.status, String(bad)).toBe(400);
      expect(['missing_parameter', 'invalid_parameter']).toContain(res.body.error.code);
    }
    expect(
      (await call(sandbox.url, '/api/v1/verify?email=a@b.com&email=c@d.com', { key: SANDBOX_KEYS.growth })).status,
    ).toBe(400);
    expect((await call(sandbox.url, '/api/v1/verify?email=a@b.com')).status).toBe(401);
    expect(sandbox.stats().units).toEqual(before);
  });

  it('replays an idempotent call (same Idempotency-Key and address) for free; another address is charged', async () => {
    const idem = (email: string, idempotencyKey: string, key: string = SANDBOX_KEYS.growth) =>
      request(`${sandbox.url}/api/v1/verify?${qs({ email })}`, {
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey },
      }).then(async (r) => ({
        status: r.statusCode,
        units: r.headers['x-units-used'],
        text: await r.body.text(),
      }));
    const before = sandbox.stats().units.growth;
    const first = await idem('ana@example.com', 'run-1/ana');
    expect(first.status).toBe(200);
    expect(sandbox.stats().units.growth).toBe(before + 1);
    const again = await idem('ana@example.com', 'run-1/ana');
    expect(again).toEqual(first);
    expect(sandbox.stats().units.growth).toBe(before + 1);
    // Letter case does not make another address: the same address in capitals is a replay too.
    const shouted = await idem('ANA@EXAMPLE.COM', 'run-1/ana');
    expect(shouted).toEqual(first);
    expect(JSON.parse(shouted.text).data.email).toBe('ana@example.com');
    expect(sandbox.stats().units.growth).toBe(before + 1);
    const otherAddress = await idem('bob@example.com', 'run-1/ana');
    expect(otherAddress.status).toBe(200);
    expect(sandbox.stats().units.growth).toBe(before + 2);
    await idem('ana@example.com', 'run-1/ana', SANDBOX_KEYS.scale); // another API key: its own scope
    expect(sandbox.stats().units.growth).toBe(before + 2);
    expect((await idem('ana@example.com', 'k'.repeat(201))).status).toBe(400);
  });

  it('confirms an honoured Idempotency-Key: Idempotent-Replayed false on the first answer, true on a replay', async () => {
    const replayed = async (headers: Record<string, string>) =>
      (
        await request(`${sandbox.url}/api/v1/verify?${qs({ email: 'cy@example.com' })}`, {
          headers: { authorization: `Bearer ${SANDBOX_KEYS.growth}`, ...headers },
        }).then(async (r) => (await r.body.text(), r))
      ).headers['idempotent-replayed'];
    expect(await replayed({ 'idempotency-key': 'run-2/cy' })).toBe('false');
    expect(await replayed({ 'idempotency-key': 'run-2/cy' })).toBe('true');
    // No key: nothing to confirm.
    expect(await replayed({})).toBeUndefined();
  });

  it('--ignore-idempotency charges every call and confirms no key', async () => {
    const ignoring = await startTestSandbox({ ignoreIdempotencyKey: true });
    try {
      const before = ignoring.stats().units.growth;
      for (let i = 0; i < 2; i++) {
        const answer = await request(`${ignoring.url}/api/v1/verify?${qs({ email: 'cy@example.com' })}`, {
          headers: { authorization: `Bearer ${SANDBOX_KEYS.growth}`, 'idempotency-key': 'run-3/cy' },
        });
        await answer.body.text();
        expect(answer.headers['idempotent-replayed']).toBeUndefined();
      }
      expect(ignoring.stats().units.growth).toBe(before + 2);
    } finally {
      await ignoring.close();
    }
  });

  it('--lie-about-idempotency charges every call and answers each "Idempotent-Replayed: false"', async () => {
    const lying = await startTestSandbox({ lieAboutIdempotency: true });
    try {
      const before = lying.stats().units.growth;
      const metas: unknown[] = [];
      for (let i = 0; i < 2; i++) {
        const answer = await request(`${lying.url}/api/v1/verify?${qs({ email: 'cy@example.com' })}`, {
          headers: { authorization: `Bearer ${SANDBOX_KEYS.growth}`, 'idempotency-key': 'run-4/cy' },
        });
        metas.push(((await answer.body.json()) as { meta: unknown }).meta);
        expect(answer.headers['idempotent-replayed']).toBe('false');
      }
      // A fresh charge each time: the service's own count goes up, the key notwithstanding.
      expect(lying.stats().units.growth).toBe(before + 2);
      expect(metas[0]).not.toEqual(metas[1]);
    } finally {
      await lying.close();
    }
  });

  it('is deterministic, and old addresses of known contacts fail more often than fresh ones', async () => {
    const a = await verify('someone@example.com');
    const b = await verify('someone@example.com');
    expect(b.body.data).toEqual(a.body.data);

    const asOf = Date.parse(`${TEST_AS_OF}T00:00:00Z`);
    const fresh: string[] = [];
    const stale: string[] = [];
    for (let i = 0; i < ds.size && (fresh.length < 150 || stale.length < 150); i += 7) {
      if (!ds.contactCounts[i]) continue;
      for (const c of ds.contactsOf(i, TEST_AS_OF)) {
        if (!c.business_email || !c.business_email_last_seen) continue;
        const age = (asOf - Date.parse(`${c.business_email_last_seen}T00:00:00Z`)) / 86_400_000;
        if (age < 120 && fresh.length < 150) fresh.push(c.business_email);
        if (age > 700 && stale.length < 150) stale.push(c.business_email);
      }
    }
    const invalidShare = async (emails: string[]) => {
      let invalid = 0;
      for (const e of emails) if ((await verify(e, SANDBOX_KEYS.scale)).body.data.status === 'invalid') invalid++;
      return invalid / emails.length;
    };
    const freshInvalid = await invalidShare(fresh);
    const staleInvalid = await invalidShare(stale);
    expect(staleInvalid).toBeGreaterThan(freshInvalid + 0.15);
    // Unknown domains are mostly "unknown".
    let unknown = 0;
    for (let k = 0; k < 60; k++)
      if ((await verify(`person${k}@no-such-company-${k}.com`, SANDBOX_KEYS.scale)).body.data.status === 'unknown')
        unknown++;
    expect(unknown).toBeGreaterThan(20);
  });

  it('never dates a check after the answer: a sandbox of today keeps to the part of the day gone by, a fixed day keeps its bytes', async () => {
    // On the fixed (past) snapshot day: a time of that day, the same for an address every time.
    const fixed = await verify('dates@example.com');
    expect(fixed.body.data.checked_at.startsWith(TEST_AS_OF)).toBe(true);
    expect((await verify('dates@example.com')).body.data.checked_at).toBe(fixed.body.data.checked_at);

    await withSandbox({ asOf: todayUtc() }, async (today) => {
      for (let k = 0; k < 200; k++) {
        const answer = await call(today.url, `/api/v1/verify?${qs({ email: `person${k}@example.com` })}`, {
          key: SANDBOX_KEYS.scale,
        });
        const answeredBy = Date.now();
        const checkedAt = Date.parse(answer.body.data.checked_at);
        expect(checkedAt, answer.body.data.checked_at).toBeLessThanOrEqual(answeredBy);
        expect(answer.body.data.checked_at.startsWith(todayUtc())).toBe(true);
      }
      // Fixed for the sandbox's life: a resumed run gets the bytes of an uninterrupted one.
      const again = async () =>
        (await call(today.url, `/api/v1/verify?${qs({ email: 'person7@example.com' })}`, { key: SANDBOX_KEYS.scale }))
          .body.data.checked_at;
      expect(await again()).toBe(await again());
    });
  });
});
