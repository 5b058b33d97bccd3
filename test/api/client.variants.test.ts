/**
 * Issue 42: the client against services that decided the contract's open points otherwise, each
 * played by a scripted server on loopback. A tolerant shape gives the control's rows with no setting;
 * a broken promise is an error that names what was seen and the setting that adapts to it, and the
 * setting then makes it work. Expected rows are the server's own data, never prospect's output.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientOptions, ProspectClient } from '../../src/api/index.js';
import { MalformedResponseError } from '../../src/api/index.js';
import { exitCodeOf, knownFailure } from '../../src/exit-codes.js';
import { runInProcess } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';
import {
  clientOf,
  closeScripted,
  failure,
  sampleCompany,
  sampleContact,
  serveScript,
  type RecordedRequest,
  type Script,
  type ScriptedResponse,
} from '../helpers/scripted-server.js';

afterEach(closeScripted);

const KEY = 'test-key-0123456789';
const PAGE = 10;
/** The service's data: 25 companies, in its order. */
const DOMAINS = Array.from({ length: 25 }, (_, i) => `c${String(i + 1).padStart(2, '0')}.com`);
const META = { source: { dataset: 'd', method: 'm', publisher: 'p', history_since: '2020' }, field_fill_rates: {} };

async function setup(script: Script, options: Partial<ClientOptions> = {}) {
  const server = await serveScript(script);
  const client = clientOf(server, { apiKey: KEY, retryBaseDelayMs: 1, maxRetries: 0, pageSize: PAGE, ...options });
  return { server, client };
}

async function listedDomains(client: ProspectClient): Promise<string[]> {
  const rows: string[] = [];
  for await (const page of client.companies({ technology: 'Shopify' })) rows.push(...page.data.map((r) => r.domain));
  return rows;
}

/** Rows from `start`, a page of them, as the server holds them. */
const rowsFrom = (start: number, row = (domain: string) => sampleCompany(domain)) =>
  DOMAINS.slice(start, start + PAGE).map(row);
const more = (start: number) => start + PAGE < DOMAINS.length;
const startOf = (request: RecordedRequest, name: string) => Number(request.query.get(name) ?? 0);
const total = { ...META, total: DOMAINS.length };

/** Each: a service that reads the next page another way, serving DOMAINS; the client needs no setting. */
const TOLERATED: Array<[string, Script]> = [
  [
    'the contract: next_cursor',
    (r) => {
      const at = startOf(r, 'cursor');
      return { body: { data: rowsFrom(at), meta: total, next_cursor: more(at) ? String(at + PAGE) : null } };
    },
  ],
  [
    'RFC 8288 Link header',
    (r) => {
      const at = startOf(r, 'page') * PAGE;
      const next = `<${r.path}?technology=Shopify&per=10&page=${at / PAGE + 1}>; rel="next", <${r.path}>; rel="first"`;
      return { headers: more(at) ? { link: next } : undefined, body: { data: rowsFrom(at), meta: total } };
    },
  ],
  [
    'meta.next_cursor',
    (r) => {
      const at = startOf(r, 'cursor');
      return { body: { data: rowsFrom(at), meta: { ...total, next_cursor: more(at) ? String(at + PAGE) : null } } };
    },
  ],
  [
    'a full next URL, rows under "results", no meta',
    (r) => {
      const at = startOf(r, 'skip');
      const next = more(at) ? `http://${r.headers.host}${r.path}?technology=Shopify&skip=${at + PAGE}` : null;
      return { body: { results: rowsFrom(at), next } };
    },
  ],
  [
    'a relative next URL, rows under "companies"',
    (r) => {
      const at = startOf(r, 'from');
      return { body: { companies: rowsFrom(at), next: more(at) ? `?technology=Shopify&from=${at + PAGE}` : null } };
    },
  ],
  [
    'null fields, numeric strings, rows under "items"',
    (r) => {
      const at = startOf(r, 'cursor');
      const row = (domain: string) =>
        sampleCompany(domain, { company_name: null, industry: null, crux_rank: '1234', tech_count: '3', phone: null });
      return { body: { items: rowsFrom(at, row), meta: null, next_cursor: more(at) ? String(at + PAGE) : null } };
    },
  ],
];

describe('companies: paging and shapes another service chose, with no setting', () => {
  it.each(TOLERATED)('%s: the rows of the control', async (_name, script) => {
    const { client } = await setup(script);
    expect(await listedDomains(client)).toEqual(DOMAINS);
  });

  it('never follows a next link to another host: the key stays with the service', async () => {
    const elsewhere = await serveScript([{ body: { data: [], meta: META } }]);
    const { client } = await setup([
      { headers: { link: `<${elsewhere.url}/api/v1/companies?page=2>; rel="next"` }, body: { data: rowsFrom(0) } },
    ]);
    const error = await failure(listedDomains(client));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error.message).toContain('a next page on another host');
    expect(elsewhere.requests).toHaveLength(0);
  });
});

/** A service that reads its cursor as `page_token` and ignores `cursor`: page one again, forever. */
function cursorUnder(name: string, nonce: boolean): Script {
  let served = 0;
  return (r) => {
    // The service reads its own cursor: the offset before the nonce.
    const at = Number.parseInt(r.query.get(name) ?? '0', 10);
    served += 1;
    const cursor = more(at) ? `${at + PAGE}${nonce ? `.${served}` : ''}` : null;
    return { body: { data: rowsFrom(at), meta: total, next_cursor: cursor } };
  };
}

describe('companies: a broken promise names what was seen and the setting, and the setting makes it work', () => {
  it.each([
    ['the same cursor twice', false, /same cursor twice/],
    [
      'a new cursor each time (a nonce), rows repeating',
      true,
      /repeated rows of an earlier page \(c01\.com … c10\.com\)/,
    ],
  ])('cursor under another name, %s: stops on the second page naming cursor-param', async (_n, nonce, seen) => {
    const { server, client } = await setup(cursorUnder('page_token', nonce));
    const error = await failure(listedDomains(client));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error.message).toMatch(seen);
    expect((error as MalformedResponseError).hint).toContain('set cursor-param');
    expect((error as MalformedResponseError).details).toMatchObject({ setting: 'cursor-param' });
    // The CLI's words: exit 5, and how to set it.
    expect(exitCodeOf(error)).toBe(5);
    expect(knownFailure(error)?.hint).toContain('(`prospect config set cursor-param VALUE` or PROSPECT_CURSOR_PARAM.)');
    expect(server.requests.length).toBeLessThanOrEqual(3);
    const { client: adapted } = await setup(cursorUnder('page_token', false), { cursorParam: 'page_token' });
    expect(await listedDomains(adapted)).toEqual(DOMAINS);
  });

  it('a listing that ends short of its own meta.total is an error, never a short list', async () => {
    const script: Script = (r) => {
      const at = startOf(r, 'p');
      return { headers: { 'x-next-page': String(at + PAGE) }, body: { data: rowsFrom(at), meta: total } };
    };
    const { client } = await setup(script);
    const error = await failure(listedDomains(client));
    expect(error.message).toContain(`ended after ${PAGE} rows while its meta.total says ${DOMAINS.length}`);
    expect((error as MalformedResponseError).hint).toMatch(/paging offset.*cursor-param/);
  });

  it('has_more with the last id: names cursor-param; once set, the last id goes under it', async () => {
    const script: Script = (r) => {
      const after = r.query.get('starting_after');
      const at = after === null ? 0 : DOMAINS.indexOf(after) + 1;
      return { body: { data: rowsFrom(at), meta: total, has_more: more(at) } };
    };
    const { client } = await setup(script);
    const error = await failure(listedDomains(client));
    expect(error.message).toContain('"has_more": true but no next cursor');
    expect((error as MalformedResponseError).hint).toContain('cursor-param');
    const { client: adapted } = await setup(script, { cursorParam: 'starting_after' });
    expect(await listedDomains(adapted)).toEqual(DOMAINS);
  });

  it('offsets: short of meta.total without the setting; every row with paging offset, offset-param and page-size-param', async () => {
    const script: Script = (r) => {
      const at = startOf(r, 'skip');
      const size = Number(r.query.get('per_page') ?? 5);
      return { body: { data: DOMAINS.slice(at, at + size).map((d) => sampleCompany(d)), meta: total } };
    };
    const { client } = await setup(script);
    expect((await failure(listedDomains(client))).message).toContain('meta.total says 25');
    const contract = { paging: 'offset', offsetParam: 'skip', pageSizeParam: 'per_page', pageSizeMax: 7 } as const;
    const { server, client: adapted } = await setup(script, { contract });
    expect(await listedDomains(adapted)).toEqual(DOMAINS);
    expect(server.requests.map((r) => [r.query.get('skip'), r.query.get('per_page')])).toEqual([
      [null, '7'],
      ['7', '7'],
      ['14', '7'],
      ['21', '7'],
      ['25', '7'],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Contacts

const CONTACT_DOMAINS = ['a.com', 'b.com'];
const controlContacts = CONTACT_DOMAINS.map((domain) => sampleContact(domain));

async function contactsOf(body: unknown, options: Partial<ClientOptions> = {}) {
  const { client } = await setup([{ body } as ScriptedResponse], options);
  return client.contacts({ domains: CONTACT_DOMAINS });
}

describe('contacts: fields and dates another service chose', () => {
  const renamed = controlContacts.map(({ business_email, business_email_last_seen, ...rest }) => ({
    ...rest,
    email: business_email,
    last_seen_at: business_email_last_seen,
  }));

  it('fields under other names: exit-5 error naming the fields seen and contact-fields; the setting reads them', async () => {
    const error = await failure(contactsOf({ data: renamed }));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error.message).toContain('without the "business_email" field');
    expect(error.message).toContain('email, last_seen_at');
    expect((error as MalformedResponseError).hint).toContain(
      "Set contact-fields to the service's name for it: business_email=email",
    );
    const contactFields = { business_email: 'email', business_email_last_seen: 'last_seen_at' };
    const adapted = await contactsOf({ contacts: renamed }, { contract: { contactFields } });
    expect(adapted.data.map((c) => [c.business_email, c.business_email_last_seen])).toEqual(
      controlContacts.map((c) => [c.business_email, c.business_email_last_seen]),
    );
    expect(adapted.data[0]).not.toHaveProperty('email');
  });

  it('ISO date-times and epoch seconds read as they are; day-first dates need date-format', async () => {
    const dated = (values: unknown[]) =>
      controlContacts.map((contact, i) => ({ ...contact, business_email_last_seen: values[i] }));
    const read = await contactsOf(dated(['2025-01-15T10:00:00Z', 1736899200]));
    // Contract row 25: a date-time is cut to its date, epoch seconds read as their UTC date.
    expect(read.data.map((c) => c.business_email_last_seen)).toEqual(['2025-01-15', '2025-01-15']);
    const error = await failure(contactsOf(dated(['15/01/2025', '30/11/2026'])));
    expect(error.message).toContain('cannot read (such as "15/01/2025")');
    expect((error as MalformedResponseError).hint).toContain(
      'Set date-format to how the service writes its dates: dmy',
    );
    const dmy = await contactsOf(dated(['15/01/2025', '30/11/2026']), { contract: { dateFormat: 'dmy' } });
    expect(dmy.data.map((c) => c.business_email_last_seen)).toEqual(['2025-01-15', '2026-11-30']);
    const mdy = await contactsOf(dated(['01/15/2025', '13/01/2025']), { contract: { dateFormat: 'mdy' } });
    // 13/01 is no month-first date: left as sent, so its freshness is unknown (row 25), not a wrong day.
    expect(mdy.data.map((c) => c.business_email_last_seen)).toEqual(['2025-01-15', '13/01/2025']);
  });

  it('a date-time with a zone is the UTC date of its instant, not the date written in its zone', async () => {
    const dated = controlContacts.map((contact, i) => ({
      ...contact,
      business_email_last_seen: ['2025-01-14T19:00:00-05:00', '2025-01-15T23:30:00+0100'][i],
    }));
    const read = await contactsOf(dated);
    expect(read.data.map((c) => c.business_email_last_seen)).toEqual(['2025-01-15', '2025-01-15']);
  });

  it('"" where the contract says null is null: no empty address to pay for, no blank date', async () => {
    const blank = controlContacts.map((contact) => ({ ...contact, business_email: '', business_email_last_seen: ' ' }));
    const read = await contactsOf({ data: blank });
    expect(read.data.map((c) => [c.business_email, c.business_email_last_seen])).toEqual([
      [null, null],
      [null, null],
    ]);
  });

  it('emails as a list: the hint never offers the date field as the email', async () => {
    const listed = controlContacts.map(({ business_email, ...rest }) => ({
      ...rest,
      emails: [{ value: business_email }],
    }));
    const error = await failure(contactsOf({ data: listed }));
    expect((error as MalformedResponseError).hint).toContain('business_email=emails');
  });
});

// ---------------------------------------------------------------------------------------------
// Verify

describe('verify: another vocabulary, path, method and parameter', () => {
  it.each([
    ['deliverable', 'valid'],
    ['undeliverable', 'invalid'],
    ['accept_all', 'risky'],
    ['Accept-All', 'risky'],
    ['catch-all', 'risky'],
    ['do_not_mail', 'invalid'],
    ['spamtrap', 'invalid'],
    ['abuse', 'invalid'],
    ['unknown', 'unknown'],
  ])('%s is %s, the word kept', async (word, verdict) => {
    const { client } = await setup([{ body: { data: { email: 'a@b.com', status: word } } }]);
    expect(await client.verify('a@b.com')).toMatchObject({ status: verdict, status_raw: word, status_known: true });
  });

  it('a word nobody knows is unknown, never valid, and said to be unknown; verify-statuses names it', async () => {
    const { client } = await setup([{ body: { data: { email: 'a@b.com', status: 'greylisted_ok' } } }]);
    expect(await client.verify('a@b.com')).toMatchObject({ status: 'unknown', status_known: false });
    const verifyStatuses = { greylisted_ok: 'valid' } as const;
    const { client: adapted } = await setup([{ body: { email: 'a@b.com', status: 'greylisted_ok' } }], {
      contract: { verifyStatuses },
    });
    expect(await adapted.verify('a@b.com')).toMatchObject({ status: 'valid', status_known: true });
  });

  it('verify-path, verify-method POST and verify-param reach the service as set', async () => {
    const contract = { verifyPath: '/v2/check', verifyMethod: 'POST', verifyParam: 'address' } as const;
    const { server, client } = await setup([{ body: { email: 'a@b.com', status: 'valid' } }], { contract });
    await client.verify('a@b.com');
    expect(server.requests.map((r) => [r.method, r.url, r.headers['content-type']])).toEqual([
      ['POST', '/v2/check', 'application/json'],
    ]);
    const { server: get, client: byGet } = await setup([{ body: { email: 'a@b.com', status: 'valid' } }], {
      contract: { verifyParam: 'address' },
    });
    await byGet.verify('a@b.com');
    expect(get.requests[0]?.url).toBe('/api/v1/verify?address=a%40b.com');
  });
});

// ---------------------------------------------------------------------------------------------
// Through main() (runInProcess): the settings reach the client from the environment, and what the
// user sees. The rows expected are the server's own.

describe('through prospect itself (main() in process)', () => {
  const env = { PROSPECT_API_KEY: KEY };

  it('companies: a Link header needs no setting; a cursor under another name fails naming it, then works', async () => {
    const [, linked] = TOLERATED[1]!;
    const link = await serveScript(linked);
    const listed = await runInProcess(['companies', '--technology', 'Shopify', '--format', 'csv', '-q'], {
      url: link.url,
      apiKey: KEY,
    });
    expect(listed.code).toBe(0);
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]),
    ).toEqual(DOMAINS);

    const renamed = await serveScript(cursorUnder('page_token', true));
    const file = join(await scratchDir('prospect-variants-'), 'leads.csv');
    const args = ['companies', '--technology', 'Shopify', '-o', file];
    const failed = await runInProcess(args, { url: renamed.url, apiKey: KEY });
    expect(failed.code).toBe(5);
    expect(failed.stderr).toContain('repeated rows of an earlier page');
    expect(failed.stderr).toContain('prospect config set cursor-param VALUE');
    expect(existsSync(file)).toBe(false);
    const adapted = await runInProcess(args, {
      url: renamed.url,
      apiKey: KEY,
      env: { PROSPECT_CURSOR_PARAM: 'page_token' },
    });
    expect(adapted.code).toBe(0);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(DOMAINS.length + 1);
  });

  it.each([
    ['{message}', { message: 'Technology shopfy not found' }],
    ['problem+json', { type: 'https://e.example/problems/unknown-technology', title: 'Unknown technology' }],
    ['{errors: [...]}', { errors: [{ detail: 'did you mean Shopify?' }] }],
  ])('a misspelt technology answered as %s is exit 2, --allow-empty or not', async (_shape, body) => {
    const server = await serveScript([{ status: 422, body }]);
    for (const extra of [[], ['--allow-empty']]) {
      const run = await runInProcess(['companies', '--technology', 'shopfy', '--format', 'csv', ...extra], {
        url: server.url,
        apiKey: KEY,
      });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
    }
  });

  it('verify: accept_all is risky with no setting; an unknown word is unknown, and exit 5 names verify-statuses', async () => {
    const words: Record<string, string> = {
      'a@x.com': 'deliverable',
      'b@x.com': 'accept_all',
      'c@x.com': 'greylisted',
    };
    const server = await serveScript((r) => ({
      body: { data: { email: r.query.get('email'), status: words[r.query.get('email') ?? ''] } },
    }));
    const summary = join(await scratchDir('verify-words'), 'summary.json');
    const run = await runInProcess(
      ['verify', '--yes', '--no-cache', '--format', 'csv', '--summary', summary, 'a@x.com', 'b@x.com', 'c@x.com'],
      {
        url: server.url,
        apiKey: KEY,
        env,
      },
    );
    // The output is written whole, and the run still fails: its verdicts are not all readable.
    expect(run.code, run.stderr).toBe(5);
    const verdicts = run.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',').slice(0, 2).join(' '));
    expect(verdicts).toEqual(['a@x.com valid', 'b@x.com risky', 'c@x.com unknown']);
    expect(run.stderr).toContain('1 verification answered with a status prospect does not know ("greylisted" 1)');
    expect(run.stderr).toContain('prospect config set verify-statuses greylisted=');
    // The service's own words are kept in the run record, each with what it was read as.
    const { verification } = JSON.parse(readFileSync(summary, 'utf8')) as { verification: Record<string, unknown> };
    expect(verification.unknown_statuses).toEqual({ greylisted: 1 });
    expect(verification.service_words).toEqual({
      deliverable: { read_as: 'valid', count: 1 },
      accept_all: { read_as: 'risky', count: 1 },
      greylisted: { read_as: 'unknown', count: 1 },
    });
  });
});
