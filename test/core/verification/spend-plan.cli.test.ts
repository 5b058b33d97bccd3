/**
 * Issue 26, points 6 and 7: a capped budget goes to the addresses confirmed longest ago in all three
 * paying commands, and the question before paying states what the run then spends, with a cap to type
 * in. Which addresses were paid for is the sandbox's own list (--record-traffic); their ages come from
 * the independent client. `contacts` reads its domains from a pipe while the person answers on the
 * terminal (the also-fix: `companies … | contacts --stale verify` asks).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../../helpers/cli.js';
import { call, contactsOfDomain, qs } from '../../helpers/independent-client.js';
import { answerOnTerminal, SCRIPT } from '../../helpers/terminal.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';
import { expectedEmailClass } from '../../helpers/email-class.js';

const KEY = SANDBOX_KEYS.growth;
const SET = ['-t', 'Shopify', '--country', 'united states', '--max', '6'];
let domains: string[];
/** business_email_last_seen of every address at the domains ('' when the service gives no date), from the independent client. */
let lastSeen: Map<string, string>;

beforeAll(async () => {
  const sandbox = await startTestSandbox();
  try {
    const { body } = await call(
      sandbox.url,
      `/api/v1/companies?${qs({ technology: 'Shopify', country: 'united states', limit: 6 })}`,
      { key: KEY },
    );
    domains = (body.data as Array<{ domain: string }>).map((company) => company.domain);
    lastSeen = new Map();
    for (const domain of domains) {
      for (const contact of await contactsOfDomain(sandbox.url, KEY, domain)) {
        // A disposable address is never paid for: not one of the addresses a run may spend on.
        if (contact.business_email && expectedEmailClass(contact.business_email, domain) !== 'disposable')
          lastSeen.set(contact.business_email.toLowerCase(), contact.business_email_last_seen ?? '');
      }
    }
  } finally {
    await sandbox.close();
  }
  expect(lastSeen.size).toBeGreaterThan(100);
});

/** A fresh sandbox that lists what it charged for (its snapshot day makes every address stale at the default --max-age). */
async function recording<T>(body: (sandbox: RunningSandbox) => Promise<T>): Promise<T> {
  const sandbox = await startTestSandbox({ recordTraffic: true });
  try {
    return await body(sandbox);
  } finally {
    await sandbox.close();
  }
}

/** Every address charged is at least as old as every address left unpaid: the oldest first. */
function expectOldestFirst(charged: string[], budget: number): void {
  expect(charged).toHaveLength(budget);
  const paid = new Set(charged);
  const youngestPaid = charged
    .map((email) => lastSeen.get(email)!)
    .sort()
    .at(-1)!;
  const oldestUnpaid = [...lastSeen]
    .filter(([email]) => !paid.has(email))
    .map(([, seen]) => seen)
    .sort()[0]!;
  expect(youngestPaid <= oldestUnpaid, `paid up to ${youngestPaid}, left ${oldestUnpaid}`).toBe(true);
}

describe('a capped budget goes to the addresses confirmed longest ago, in every paying command', () => {
  const commands: Array<[string, (dir: string) => Promise<string[]>]> = [
    ['pipeline', async () => ['pipeline', ...SET, '--stale', 'verify', '--verify-budget', '25', '--format', 'csv']],
    ['contacts', async () => ['contacts', ...domains, '--stale', 'verify', '--verify-budget', '25', '--format', 'csv']],
    [
      'verify',
      async (dir) => {
        const file = join(dir, 'people.csv');
        await writeFile(
          file,
          `business_email,business_email_last_seen\n${[...lastSeen].map(([email, seen]) => `${email},${seen}`).join('\n')}\n`,
        );
        return ['verify', '--file', file, '--verify-budget', '25', '--format', 'csv'];
      },
    ],
  ];
  it.each(commands)('%s --verify-budget 25', async (name, argsIn) => {
    await recording(async (sandbox) => {
      const args = await argsIn(await scratchDir());
      // The pipeline spawned; the others run the same main() in process.
      const run =
        name === 'pipeline'
          ? await runCli(args, { url: sandbox.url, apiKey: KEY })
          : await runInProcess(args, { url: sandbox.url, apiKey: KEY });
      expect(run.code, run.stderr).toBe(0);
      expect(sandbox.stats().units.growth).toBe(25);
      expectOldestFirst(sandbox.stats().verified_emails!, 25);
    });
  });
});

/** prospect on a pseudo-terminal, `piped` on its stdin, answering the question; `units`: what the question said it would spend. */
async function onTerminal(sandbox: RunningSandbox, args: string[], answer: string, piped?: string) {
  const run = await answerOnTerminal(args, answer, { url: sandbox.url, apiKey: KEY, piped });
  const question = /Verifying ([\d,]+) addresses: ([\d,]+) already paid for, ([\d,]+) to pay for, ([\d,]+) units?/.exec(
    run.screen,
  );
  return { ...run, units: question ? Number(question[4]!.replace(/,/g, '')) : undefined };
}

describe.skipIf(SCRIPT.skip)('the question states what the run then spends, and takes a cap', () => {
  it('companies … | contacts --stale verify asks on the terminal; "y" spends exactly the units it said', async () => {
    await recording(async (sandbox) => {
      const run = await onTerminal(
        sandbox,
        ['contacts', '--stale', 'verify', '--format', 'csv'],
        'y\r',
        `${domains.join('\n')}\n`,
      );
      expect(run.asked).toBe(true);
      expect(run.code, run.screen).toBe(0);
      expect(run.units).toBe(lastSeen.size);
      // Within 25% is the promise; the count is exact, as every address is known before the question.
      expect(sandbox.stats().units.growth).toBe(run.units);
    });
  });

  it('pipeline: a number for an answer is the cap, paid to the oldest addresses', async () => {
    await recording(async (sandbox) => {
      const run = await onTerminal(
        sandbox,
        ['pipeline', ...SET, '--stale', 'verify', '--format', 'csv', '-o', join(await scratchDir(), 'leads.csv')],
        '12\r',
      );
      expect(run.asked).toBe(true);
      expect(run.code, run.screen).toBe(0);
      expect(run.units).toBe(lastSeen.size);
      expect(sandbox.stats().units.growth).toBe(12);
      expectOldestFirst(sandbox.stats().verified_emails!, 12);
    });
  });

  it('a run started with --yes (verifying as leads arrive) is not resumed without it: it would pay unasked', async () => {
    const state = join(await scratchDir(), 'state');
    const args = ['pipeline', ...SET, '--stale', 'verify', '--state', state, '--format', 'csv'];
    // The first run fails at once (a service that is down), leaving its checkpoint.
    const down = await startTestSandbox({ failRate: 1 });
    try {
      const failed = await runInProcess(['--max-retries', '0', ...args, '--yes'], { url: down.url, apiKey: KEY });
      expect(failed.code, failed.stderr).toBe(5);
    } finally {
      await down.close();
    }
    await recording(async (sandbox) => {
      const run = await answerOnTerminal(args, 'y\r', { url: sandbox.url, apiKey: KEY });
      expect(run.code, run.screen).toBe(2);
      expect(run.asked).toBe(false);
      expect(run.screen).toContain('holds an unfinished run started with --yes');
      expect(sandbox.stats().units.growth).toBe(0);
    });
  });
});
