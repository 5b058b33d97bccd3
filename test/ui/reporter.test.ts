/**
 * The reporter's order with `2>&1`: stdout and stderr reach one pipe, so a line for people waits
 * until stdout has written what it holds; written at once, it would land inside a record. The pipe
 * is a Writable that takes each chunk a turn of the event loop later, as a pipe whose reader is slow.
 */
import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Reporter } from '../../src/ui/reporter.js';

function sharedPipe() {
  const received: string[] = [];
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      setImmediate(() => {
        received.push(chunk.toString());
        done();
      });
    },
  });
  const stderr = new Writable({
    write(chunk: Buffer, _encoding, done) {
      received.push(chunk.toString());
      done();
    },
  });
  return { received, stdout, stderr };
}

const settle = async () => {
  for (let turn = 0; turn < 10; turn += 1) await nextTurn();
};

describe('a warning and the data on one pipe (2>&1)', () => {
  it('comes after the record stdout is still writing, never inside it; lines keep their order', async () => {
    const { received, stdout, stderr } = sharedPipe();
    const reporter = new Reporter({ stderr, stdout, stderrIsTTY: false, verbose: false, quiet: false, debug: false });
    stdout.write('{"domain":');
    stdout.write('"acme.com"}\n');
    reporter.caveat('3 lines skipped');
    reporter.error('the service did not answer', 'Try again later.');
    await settle();
    expect(received.join('')).toBe(
      '{"domain":"acme.com"}\nwarning: 3 lines skipped\nprospect: the service did not answer\nTry again later.\n',
    );
  });

  it('is written at once when stdout holds nothing', () => {
    const { received, stdout, stderr } = sharedPipe();
    const reporter = new Reporter({ stderr, stdout, stderrIsTTY: false, verbose: false, quiet: false, debug: false });
    reporter.caveat('3 lines skipped');
    expect(received).toEqual(['warning: 3 lines skipped\n']);
  });
});

/** Every control a hostile service may put in a name: ESC sequences of each kind, C1, BEL, BS, bidi. */
const HOSTILE =
  'Acme\u001b]52;c;cm0gLXJmIH4=\u0007\u001b]0;owned\u001b\\\u001b]8;;https://evil.example\u0007link\u001b]8;;\u0007' +
  '\u001b[2J\u009b31m\u0008\u0007\u202eCorp\u2066x\u2069\u200f';
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('what the service said, in a line for people', () => {
  it('a line held until stdout drains is written without a control character (issue 34 mutant)', async () => {
    const { received, stdout, stderr } = sharedPipe();
    const reporter = new Reporter({ stderr, stdout, stderrIsTTY: false, verbose: false, quiet: false, debug: false });
    stdout.write('a record still on its way\n');
    reporter.caveat(`company ${HOSTILE} was cut`);
    reporter.error(`the service said ${HOSTILE}`);
    expect(received).toEqual([]);
    await settle();
    const text = received.join('');
    expect(text).toBe(
      'a record still on its way\nwarning: company AcmelinkCorpx was cut\nprospect: the service said AcmelinkCorpx\n',
    );
    expect(text).not.toMatch(CONTROL);
  });

  it('a line written at once is written without a control character', () => {
    const { received, stdout, stderr } = sharedPipe();
    const reporter = new Reporter({ stderr, stdout, stderrIsTTY: false, verbose: false, quiet: false, debug: false });
    reporter.caveat(HOSTILE);
    expect(received).toEqual(['warning: AcmelinkCorpx\n']);
  });

  it('on a terminal, wraps a long line at spaces to its width', () => {
    const { received, stderr } = sharedPipe();
    Object.assign(stderr, { columns: 40 });
    const reporter = new Reporter({ stderr, stderrIsTTY: true, verbose: false, quiet: false, debug: false });
    reporter.info('Wrote 1,204 contacts to the terminal · 1,080 with an email · no email 457 · invalid 12.');
    const lines = received.join('').trimEnd().split('\n');
    expect(lines).toEqual([
      'Wrote 1,204 contacts to the terminal ·',
      '1,080 with an email · no email 457 ·',
      'invalid 12.',
    ]);
  });
});
