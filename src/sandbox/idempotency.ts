/**
 * Idempotent verification (contract row 27): a `/verify` call repeated with the same Idempotency-Key and
 * the same address within 24 hours gets the first answer again and costs nothing. Keys are scoped to
 * the API key; the same Idempotency-Key with another address is a separate call.
 */
import { invalidParameter } from './errors.js';
import type { Reply } from './types.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** On the answer to a call whose key was honoured: `true` for a replay (no unit), `false` for a first answer. */
export const REPLAYED_HEADER = 'idempotent-replayed';
const MAX_KEY_LENGTH = 200;
const RETENTION_MS = 24 * 60 * 60 * 1000;
/** Bounded memory: the oldest answers are forgotten first. */
const MAX_ENTRIES = 100_000;

/** The request's Idempotency-Key, undefined when absent or empty; 400 when too long or repeated. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (Array.isArray(header)) throw invalidParameter('Idempotency-Key', 'Send the Idempotency-Key header once.');
  const key = header?.trim();
  if (!key) return undefined;
  if (key.length > MAX_KEY_LENGTH)
    throw invalidParameter('Idempotency-Key', `The Idempotency-Key header takes at most ${MAX_KEY_LENGTH} characters.`);
  return key;
}

/**
 * How the sandbox treats the key: honours it; ignores it and says nothing (`--ignore-idempotency`);
 * or ignores it and still answers `Idempotent-Replayed: false`, a lie (`--lie-about-idempotency`).
 */
export type IdempotencyMode = 'honour' | 'ignore' | 'lie';

export function idempotencyModeOf(options: {
  ignoreIdempotencyKey: boolean;
  lieAboutIdempotency: boolean;
}): IdempotencyMode {
  if (options.lieAboutIdempotency) return 'lie';
  return options.ignoreIdempotencyKey ? 'ignore' : 'honour';
}

export class IdempotencyStore {
  private readonly answers = new Map<string, { reply: Reply; at: number }>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  replay(scope: string, key: string, address: string): Reply | undefined {
    const id = this.id(scope, key, address);
    const hit = this.answers.get(id);
    if (!hit) return undefined;
    if (this.now() - hit.at > RETENTION_MS) {
      this.answers.delete(id);
      return undefined;
    }
    return hit.reply;
  }

  remember(scope: string, key: string, address: string, reply: Reply): void {
    this.answers.set(this.id(scope, key, address), { reply, at: this.now() });
    if (this.answers.size > MAX_ENTRIES) this.answers.delete(this.answers.keys().next().value as string);
  }

  private id(scope: string, key: string, address: string): string {
    return JSON.stringify([scope, key, address]);
  }
}
