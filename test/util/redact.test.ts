import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact, redactDeep, redactSecret, withoutPassword } from '../../src/util/redact.js';

describe('redactSecret', () => {
  it('shows only the last four characters', () => {
    expect(redactSecret('sk_live_0123456789abf00d')).toBe('…f00d');
    expect(redactSecret('0123456789ab')).toBe('…89ab');
  });

  it('shows nothing of a short secret', () => {
    expect(redactSecret('0123456789a')).toBe('…');
    expect(redactSecret('short-key')).toBe('…');
    expect(redactSecret('')).toBe('…');
  });
});

/** Every character of `text` written as JSON writes it escaped: \u0073\u006b… */
function jsonEscaped(text: string): string {
  return Array.from(
    { length: text.length },
    (_, index) => `\\u${text.charCodeAt(index).toString(16).padStart(4, '0')}`,
  ).join('');
}

/** Every byte percent-encoded, the hex in the given case. */
function percentEncoded(text: string, upper: boolean): string {
  const hex = [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  return upper ? hex.toUpperCase() : hex;
}

describe('redact', () => {
  const key = 'sk_live_AbCd1234/x"y\\z';

  it('removes the key in any letter case, everywhere in a JSON value', () => {
    const plain = 'sk_live_AbCd1234';
    expect(redact(`unknown key ${plain.toUpperCase()} or ${plain.toLowerCase()} (${plain})`, plain)).toBe(
      'unknown key [redacted] or [redacted] ([redacted])',
    );
    expect(redactDeep({ [plain]: [`x${plain}`], n: 1, none: null }, plain)).toEqual({
      '[redacted]': ['x[redacted]'],
      n: 1,
      none: null,
    });
  });

  it('treats the key as text, not a pattern', () => {
    expect(redact('a.b+c? and aXb+c?', 'a.b+c?')).toBe('[redacted] and aXb+c?');
    expect(redact('(a|b) and a', '(a|b)')).toBe('[redacted] and a');
    expect(redact('[ab]^$ a', '[ab]^$')).toBe('[redacted] a');
  });

  it('removes the key JSON-escaped: \\u forms in any hex case, \\/ and the escapes JSON must use', () => {
    const escaped = JSON.stringify(key).slice(1, -1); // \" and \\ as JSON writes them
    expect(redact(`{"error":"bad key ${escaped}"}`, key)).toBe('{"error":"bad key [redacted]"}');
    expect(redact(`key ${jsonEscaped(key)}.`, key)).toBe('key [redacted].');
    expect(redact(`key ${jsonEscaped(key).toUpperCase()}.`, key)).toBe('key [redacted].');
    expect(redact('sk_live_AbCd1234\\/x\\"y\\\\z', key)).toBe('[redacted]');
  });

  it('removes the key in any mix of plain, escaped and percent-encoded characters', () => {
    const plain = 'sk_live_AbCd1234';
    const mixed = '\\u0073k_%6Cive\\u005F' + 'AbCd%31234';
    expect(redact(`was ${mixed}!`, plain)).toBe('was [redacted]!');
    expect(redact(percentEncoded(plain, true), plain)).toBe('[redacted]');
    expect(redact(percentEncoded(plain, false), plain)).toBe('[redacted]');
    expect(redact(`${percentEncoded('é', false)}`, 'éééé')).toBe('%c3%a9');
    expect(redact(`${percentEncoded('éééé', false)}`, 'éééé')).toBe('[redacted]');
    expect(redact(`x ${jsonEscaped('😀😀')}`, '😀😀')).toBe('x [redacted]');
  });

  it('removes it from a URL percent-encoded, as a cursor carries it', () => {
    const urlKey = 'k3y+with/slash';
    expect(redact(`https://x/?cursor=${encodeURIComponent(urlKey)}&b=${urlKey}`, urlKey)).toBe(
      'https://x/?cursor=[redacted]&b=[redacted]',
    );
  });

  it('leaves a key shorter than 4 characters, and text without the key, as they are', () => {
    expect(redact('abc and ABC', 'abc')).toBe('abc and ABC');
    expect(redact('abcd and ABCD', 'abcd')).toBe('[redacted] and [redacted]');
    expect(redact('nothing here', undefined)).toBe('nothing here');
    expect(redact('nothing here', '')).toBe('nothing here');
    expect(redact('sk_live_AbCd123', 'sk_live_AbCd1234')).toBe('sk_live_AbCd123');
  });

  it('a byte below 0x10 is percent-encoded in two digits (%0a), and \\u in four', () => {
    const key = 'ab\ncd\tef';
    expect(redact('x ab%0Acd%09ef y', key)).toBe('x [redacted] y');
    expect(redact('x ab\\u000acd\\u0009ef y', key)).toBe('x [redacted] y');
  });

  it('a second key is redacted by its own pattern, and the first one no longer', () => {
    expect(redact('first-key-1 second-key-2', 'first-key-1')).toBe('[redacted] second-key-2');
    expect(redact('first-key-1 second-key-2', 'second-key-2')).toBe('first-key-1 [redacted]');
    expect(redact('first-key-1 second-key-2', 'first-key-1')).toBe('[redacted] second-key-2');
  });

  it('property: any key, written in any mix of forms inside any text, is gone', () => {
    const keyChar = fc.constantFrom(...'abcXYZ019_-./+"\\~!$%&'.split(''));
    fc.assert(
      fc.property(
        fc.array(keyChar, { minLength: 4, maxLength: 24 }).map((chars) => chars.join('')),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 24, maxLength: 24 }),
        fc.string(),
        fc.string(),
        (secret, forms, before, after) => {
          const written = [...secret]
            .map((char, index) => {
              const form = forms[index]!;
              if (form === 1) return jsonEscaped(char);
              if (form === 2) return percentEncoded(char, true);
              if (form === 3) return percentEncoded(char, false);
              if (form === 4) return char.toUpperCase();
              return char;
            })
            .join('');
          const shown = redact(`${before}${written}${after}`, secret);
          expect(shown).toContain('[redacted]');
          expect(shown.toLowerCase()).not.toContain(secret.toLowerCase());
        },
      ),
    );
  });
});

describe('withoutPassword', () => {
  it.for([
    // userinfo: with or without a user or a scheme, @ and : in the password, percent-encoded
    ['alice:secret@host:3128', 'alice:***@host:3128'],
    ['http://alice@corp:secret@host:3128', 'http://alice@corp:***@host:3128'],
    ['http://alice:p@ssw0rd@host:3128', 'http://alice:***@host:3128'],
    ['http://alice%40corp:s%40cr%3Aet@host:3128/', 'http://alice%40corp:***@host:3128/'],
    ['HTTPS://bob:pa:ss@proxy.corp', 'HTTPS://bob:***@proxy.corp'],
    ['http://:token@proxy:3128', 'http://:***@proxy:3128'],
    [':token@proxy:3128', ':***@proxy:3128'],
    ['postgres://:pw@h', 'postgres://:***@h'],
    ['postgres://prospect:s3cr%2Ft@db.internal:5432/leads', 'postgres://prospect:***@db.internal:5432/leads'],
    ['postgresql://u:p@ss@db/x?sslmode=require', 'postgresql://u:***@db/x?sslmode=require'],
    ['postgres://u:a b@h/db', 'postgres://u:***@h/db'],
    // query parameters libpq reads a password from, the name in any case or percent-encoded
    ['postgres://u@h/db?password=secret', 'postgres://u@h/db?password=***'],
    [
      'postgres://u@h/db?sslmode=require&password=s%40c&dbname=x',
      'postgres://u@h/db?sslmode=require&password=***&dbname=x',
    ],
    ['postgres://u@h/db?sslpassword=k3y#frag', 'postgres://u@h/db?sslpassword=***#frag'],
    ['postgres://u@h/db?PassWord=x', 'postgres://u@h/db?PassWord=***'],
    ['postgres://u@h/db?pass%77ord=x', 'postgres://u@h/db?pass%77ord=***'],
    ['postgres://u@h/db?%zz=1&password=x', 'postgres://u@h/db?%zz=1&password=***'],
    ['postgres://u@h/db?password+=x', 'postgres://u@h/db?password+=***'],
    ['postgres://u@h/a;b/c?password=x', 'postgres://u@h/a;b/c?password=***'],
    ['postgres://u@h/db?passfile=/home/u/.pgpass&user=u', 'postgres://u@h/db?passfile=/home/u/.pgpass&user=u'],
    ['postgres://u:pw@h/db?password=x', 'postgres://u:***@h/db?password=***'],
    // conninfo: quoted, spaced, escaped
    ['host=db password=secret dbname=x', 'host=db password=*** dbname=x'],
    ["host=db password='a b' user=u", 'host=db password=*** user=u'],
    ["password = 'it\\'s' user=u", 'password = *** user=u'],
    ['host=db PASSWORD=a\\ b user=u', 'host=db PASSWORD=*** user=u'],
    ['host=db sslpassword="x y" PGPASSWORD=z', 'host=db sslpassword=*** PGPASSWORD=***'],
    ["host=db password='unterminated", 'host=db password=***'],
    // messages that hold URLs
    [
      'cannot reach postgres://u:pw@h/db (refused); then http://:t@p:1 too',
      'cannot reach postgres://u:***@h/db (refused); then http://:***@p:1 too',
    ],
    ['failed: postgres://u@h/db?password=x&a=1 refused', 'failed: postgres://u@h/db?password=***&a=1 refused'],
    ['bad (password=x)', 'bad (password=***'],
    ["host=db password='a b", 'host=db password=***'],
    ['host=db password="x y', 'host=db password=***'],
    ['failed (postgres://u:pw@h/db) now', 'failed (postgres://u:***@h/db) now'],
    ['see x://u:pw@h now', 'see x://u:***@h now'],
    ['copy to s3://u:pw@h failed', 'copy to s3://u:***@h failed'],
    ['at:http://u:pw@h/x, mail more@y', 'at:http://u:***@h/x, mail more@y'],
    [' alice:secret@host:3128\n', ' alice:***@host:3128\n'],
    ['alice:secret@host:3128/?go=http://x', 'alice:***@host:3128/?go=http://x'],
    ['postgres://u@h/db?pass+word=x', 'postgres://u@h/db?pass+word=x'],
    ['postgres://u@h/db?pass%zzword=x&password=y', 'postgres://u@h/db?pass%zzword=x&password=***'],
    // nothing to hide
    ['http://proxy.corp:3128', 'http://proxy.corp:3128'],
    ['http://tokenuser@proxy.corp:3128', 'http://tokenuser@proxy.corp:3128'],
    ['proxy.corp:3128', 'proxy.corp:3128'],
    ['postgres://u@h/db?sslmode=require', 'postgres://u@h/db?sslmode=require'],
    ['connection refused at 10:00 by mail@example', 'connection refused at 10:00 by mail@example'],
    ['the passwords=x stay', 'the passwords=x stay'],
    ['nopassword=x', 'nopassword=x'],
  ] as const)('%s → %s', ([url, shown]) => {
    expect(withoutPassword(url)).toBe(shown);
  });

  it('property: a password in any accepted form never shows', () => {
    const password = fc.stringMatching(/^[A-Za-z0-9!$*~]{6,16}$/);
    fc.assert(
      fc.property(password, fc.constantFrom('http', 'https', 'postgres', 'postgresql'), (secret, scheme) => {
        for (const text of [
          `${scheme}://user:${secret}@host:1/db`,
          `${scheme}://:${secret}@host:1`,
          `${scheme}://user:${encodeURIComponent(secret)}@host`,
          `${scheme}://user@host/db?sslmode=require&password=${encodeURIComponent(secret)}`,
          `host=h password=${secret} dbname=d`,
          `host=h password='${secret} x'`,
          `error: ${scheme}://u:${secret}@h/d failed`,
        ])
          expect(withoutPassword(text)).not.toContain(secret);
      }),
    );
  });
});
