import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkEmailSyntax, emailKey, MAX_EMAIL_LENGTH, type EmailResult } from '../../src/io/emails.js';

describe('checkEmailSyntax', () => {
  it.each([
    ['jane.doe@acme.com', 'jane.doe@acme.com'],
    ['  Jane.Doe@ACME.COM  ', 'Jane.Doe@acme.com'],
    ['bob+sales@acme.co.uk', 'bob+sales@acme.co.uk'],
    ["o'brien@acme.ie", "o'brien@acme.ie"],
    ['a!#$%&*/=?^_`{|}~-z@acme.com', 'a!#$%&*/=?^_`{|}~-z@acme.com'],
    ['info@bücher.de', 'info@xn--bcher-kva.de'],
    ['info@www.acme.com', 'info@www.acme.com'],
    ['info@acme.com.', 'info@acme.com'],
  ])('%s -> %s', (input, email) => {
    expect(checkEmailSyntax(input)).toEqual({ ok: true, email });
  });

  it.each([
    ['', 'empty'],
    ['acme.com', 'no "@"'],
    ['a@b@acme.com', 'more than one "@"'],
    ['@acme.com', 'nothing before "@"'],
    ['"jane doe"@acme.com', 'quoted local parts are not supported'],
    ['jane"x"@acme.com', 'quoted local parts are not supported'],
    ['.jane@acme.com', 'starts or ends with a dot before "@"'],
    ['jane.@acme.com', 'starts or ends with a dot before "@"'],
    ['ja..ne@acme.com', 'two dots in a row'],
    ['jane doe@acme.com', 'contains whitespace'],
    ['jane(x)@acme.com', 'contains "("'],
    ['jöhn@acme.com', 'non-ASCII characters before "@" are not supported'],
    [`${'a'.repeat(65)}@acme.com`, 'more than 64 characters before "@"'],
    ['jane@', 'domain: empty'],
    ['jane@acme', 'domain: no dot'],
    ['jane@acme..com', 'domain: empty label (two dots in a row, or a leading dot)'],
    ['jane@[10.0.0.1]', 'domain: an IP address, not a domain'],
    ['jane@10.0.0.1', 'domain: an IP address, not a domain'],
    ['jane@acme.com/x', 'domain: contains "/"'],
    ['Jane Doe <jane@acme.com>', 'contains whitespace'],
  ])('%j is rejected: %s', (input, reason) => {
    expect(checkEmailSyntax(input)).toEqual({ ok: false, reason });
  });

  it(`rejects addresses over ${MAX_EMAIL_LENGTH} characters`, () => {
    const local = 'a'.repeat(64);
    const domain = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`;
    expect(checkEmailSyntax(`${local}@${domain}`)).toEqual({
      ok: false,
      reason: `longer than ${MAX_EMAIL_LENGTH} characters`,
    });
    expect(checkEmailSyntax(`${local}@${domain.slice(4)}`).ok).toBe(true);
  });
});

describe('emailKey', () => {
  it('lower-cases the whole address so two spellings are verified once', () => {
    expect(emailKey('Jane.Doe@Acme.com')).toBe('jane.doe@acme.com');
    expect(emailKey(' jane.doe@acme.com ')).toBe(emailKey('JANE.DOE@ACME.COM'));
  });
});

describe('checkEmailSyntax properties', () => {
  const fitsSubset = (email: string): boolean => email.length <= MAX_EMAIL_LENGTH && !email.startsWith('"');

  it('never throws and returns an address or a reason, for any string', () => {
    const anyText = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 80 }));
    fc.assert(
      fc.property(anyText, (input) => {
        let result: EmailResult | undefined;
        expect(() => {
          result = checkEmailSyntax(input);
        }).not.toThrow();
        if (result?.ok === true) expect(checkEmailSyntax(result.email)).toEqual(result);
        if (result?.ok === false) expect(result.reason).not.toBe('');
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts every fc.emailAddress() within the subset, unchanged', () => {
    fc.assert(
      fc.property(fc.emailAddress().filter(fitsSubset), (email) => {
        expect(checkEmailSyntax(email)).toEqual({ ok: true, email });
        expect(checkEmailSyntax(`  ${email.toUpperCase()} `).ok).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('is idempotent and keys case-insensitively', () => {
    fc.assert(
      fc.property(fc.emailAddress().filter(fitsSubset), (email) => {
        const upper = checkEmailSyntax(email.toUpperCase());
        expect(upper.ok).toBe(true);
        if (!upper.ok) return;
        expect(checkEmailSyntax(upper.email)).toEqual(upper);
        expect(emailKey(upper.email)).toBe(emailKey(email));
      }),
      { numRuns: 500 },
    );
  });
});
