/** A service's word as one of four verdicts (row 22): an unknown word is `unknown`, never `valid`, and said so. */
import type { Verdict } from './contract.js';

/** The common vocabularies: the contract's, Kickbox's and Hunter's, ZeroBounce's and NeverBounce's. */
const KNOWN_WORDS: Readonly<Record<string, Verdict>> = {
  valid: 'valid',
  deliverable: 'valid',
  invalid: 'invalid',
  undeliverable: 'invalid',
  // Known to bounce, complain or trap: never to be sent to.
  do_not_mail: 'invalid',
  spamtrap: 'invalid',
  abuse: 'invalid',
  disposable: 'invalid',
  risky: 'risky',
  accept_all: 'risky',
  catch_all: 'risky',
  catchall: 'risky',
  // Hunter: a webmail address, whose mailbox the check cannot confirm.
  webmail: 'risky',
  unknown: 'unknown',
  unverifiable: 'unknown',
};

/** `raw`: the service's word as sent; `known`: whether the vocabularies or `verify-statuses` name it. */
type ReadStatus = { status: Verdict; raw: string; known: boolean };

/** `accept-all`, `Accept All` and `accept_all` are one word. */
const wordOf = (text: string) =>
  text
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

export function readVerifyStatus(raw: string, extra: Readonly<Record<string, Verdict>>): ReadStatus {
  const word = wordOf(raw);
  const extraWord = Object.entries(extra).find(([theirs]) => wordOf(theirs) === word)?.[1];
  const status = extraWord ?? KNOWN_WORDS[word];
  return status === undefined ? { status: 'unknown', raw, known: false } : { status, raw, known: true };
}
