/**
 * The team's shared key (`team-key`, PROSPECT_TEAM_KEY), which every machine of the team has and the
 * database never holds: whoever can read the database cannot tell which address or lead a row is
 * about, or read a stored page of an unfinished run. One key for each use, derived by HKDF-SHA256, so
 * none serves two purposes. A hash is HMAC-SHA256 of the unkeyed digest the store kept before schema 3,
 * so that migration re-keys the rows it finds without knowing their addresses.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class TeamKeys {
  private constructor(
    private readonly addressKey: Buffer,
    private readonly leadKey: Buffer,
    private readonly chunkKey: Buffer,
    private readonly domainKey: Buffer,
    private readonly snapshotKey: Buffer,
    private readonly suppressionKey: Buffer,
    private readonly provenanceKey: Buffer,
    /** Shows which key wrote a database (meta.team_key_check) without telling the key. */
    readonly check: Buffer,
  ) {}

  static from(teamKey: string): TeamKeys {
    const derive = (use: string) => Buffer.from(hkdfSync('sha256', teamKey, 'prospect team store', use, 32));
    return new TeamKeys(
      derive('address hash'),
      derive('lead hash'),
      derive('job chunks'),
      derive('snapshot domain'),
      derive('snapshot rows'),
      derive('suppression hash'),
      derive('provenance hash'),
      createHmac('sha256', derive('key check')).update('prospect team key check').digest(),
    );
  }

  /** An address of ledger `ledger` (equality is all the ledger needs). */
  addressHash(ledger: string, address: string): Buffer {
    return this.rekeyAddress(createHash('sha256').update(`${ledger}\n${address}`).digest());
  }

  /**
   * An address `prospect forget` keeps out (its emailKey), across every ledger: a reader of the
   * database without the team key cannot test a candidate address against it.
   */
  suppressionHash(emailKey: string): Buffer {
    return createHmac('sha256', this.suppressionKey).update(emailKey).digest();
  }

  /** An exported address (lead-key.ts addressDigest), for `prospect provenance`. */
  provenanceHash(digest: Buffer): Buffer {
    return createHmac('sha256', this.provenanceKey).update(digest).digest();
  }

  /** What schema 2 stored for an address (sha256 of the ledger and the address), keyed. */
  rekeyAddress(digest: Buffer): Buffer {
    return createHmac('sha256', this.addressKey).update(digest).digest();
  }

  /** A lead key (lead-key.ts, which schema 2 stored as it is), keyed. */
  leadHash(leadKey: Buffer): Buffer {
    return createHmac('sha256', this.leadKey).update(leadKey).digest();
  }

  /** A domain of a listing's snapshot (business data: equality is all a diff needs), or its series' filters. */
  domainHash(text: string): Buffer {
    return createHmac('sha256', this.domainKey).update(text).digest();
  }

  /** A snapshot's company, sealed as a job's pages are, under its own key. */
  sealSnapshot(data: Buffer, context: string): Buffer {
    return seal(this.snapshotKey, data, context);
  }

  openSnapshot(sealed: Buffer, context: string): Buffer {
    return open(this.snapshotKey, sealed, context);
  }

  /** AES-256-GCM under a fresh IV: IV, ciphertext, tag. `context` binds it to its place (job, run, file, seq). */
  seal(data: Buffer, context: string): Buffer {
    return seal(this.chunkKey, data, context);
  }

  /** The data `seal` was given for the same context; throws when the key, the context or a byte differs. */
  open(sealed: Buffer, context: string): Buffer {
    return open(this.chunkKey, sealed, context);
  }
}

function seal(key: Buffer, data: Buffer, context: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
  return Buffer.concat([iv, cipher.update(data), cipher.final(), cipher.getAuthTag()]);
}

function open(key: Buffer, sealed: Buffer, context: string): Buffer {
  const iv = sealed.subarray(0, IV_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
}
