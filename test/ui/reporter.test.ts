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
