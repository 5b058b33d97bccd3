/**
 * The certificates a run trusts. Node's own list (with NODE_EXTRA_CA_CERTS) by default;
 * SSL_CERT_FILE replaces that list, as gh (Go) and OpenSSL read it; `ca-file` (PROSPECT_CA_FILE, or
 * the config file) adds to whichever list is in effect. A file that is missing or holds no PEM
 * certificate stops the run before any request (exit 2), naming the file and where it was set.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { UsageError } from '../exit-codes.js';
import { nonEmpty } from '../util/text.js';
import { settingOf } from './precedence.js';

export interface TrustSettings {
  /** PEM certificates for the client; undefined: Node's own list, untouched. */
  ca: string[] | undefined;
  /** What is trusted and where it came from, for `prospect doctor`. */
  description: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The PEM certificates in a file; a UsageError naming the file and `source` when there are none. */
export function readCaFile(path: string, source: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UsageError(
      `cannot read the CA file ${path} (${code}), set by ${source}.`,
      'Give the path of a PEM file of CA certificates, or unset it.',
    );
  }
  const certificates = text.match(PEM_CERTIFICATE);
  if (certificates === null) {
    throw new UsageError(
      `the CA file ${path}, set by ${source}, holds no PEM certificate.`,
      'It must contain "-----BEGIN CERTIFICATE-----" blocks (convert DER with `openssl x509 -inform der -in FILE`).',
    );
  }
  // A block OpenSSL cannot read would fail every handshake as "not trusted" (exit 5): the file is wrong.
  certificates.forEach((pem, index) => {
    try {
      new X509Certificate(pem);
    } catch {
      throw new UsageError(
        `the CA file ${path}, set by ${source}, has a broken certificate ` +
          `(block ${index + 1} of ${certificates.length}).`,
        'Each block must be whole, from "-----BEGIN CERTIFICATE-----" to "-----END CERTIFICATE-----"; copy it again.',
      );
    }
  });
  return certificates;
}

/** The trust in effect for this environment and config value of `ca-file`. */
export function trustSettings(env: NodeJS.ProcessEnv, configCaFile: string | undefined): TrustSettings {
  const setting = settingOf('ca-file', { env, config: () => configCaFile });
  const caFile = setting && { path: setting.value, source: setting.where };
  const sslCertFile = nonEmpty(env.SSL_CERT_FILE);
  if (caFile === undefined && sslCertFile === undefined) {
    const extra = nonEmpty(env.NODE_EXTRA_CA_CERTS);
    return { ca: undefined, description: extra ? `Node's CAs and NODE_EXTRA_CA_CERTS (${extra})` : "Node's CAs" };
  }
  // Giving the client a list replaces Node's, NODE_EXTRA_CA_CERTS included: keep what it added.
  const extra = nonEmpty(env.NODE_EXTRA_CA_CERTS);
  const base = sslCertFile !== undefined ? readCaFile(sslCertFile, 'SSL_CERT_FILE') : [...rootCertificates];
  const added = caFile !== undefined ? readCaFile(caFile.path, caFile.source) : [];
  const extraCerts = extra !== undefined ? readCaFile(extra, 'NODE_EXTRA_CA_CERTS') : [];
  const parts = [
    sslCertFile !== undefined ? `SSL_CERT_FILE (${sslCertFile}) in place of Node's CAs` : "Node's CAs",
    ...(caFile !== undefined ? [`${caFile.path} (${caFile.source})`] : []),
    ...(extra !== undefined ? [`NODE_EXTRA_CA_CERTS (${extra})`] : []),
  ];
  return { ca: [...base, ...added, ...extraCerts], description: parts.join(' + ') };
}
