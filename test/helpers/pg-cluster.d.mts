export interface PgClusterPlace {
  dir: string;
  port: number;
  socketDir: string;
  /** With `tls`: the PEM file of the CA that signed the server's certificate. */
  ca?: string;
}
export function startPgCluster(options: {
  command?: string;
  password: string;
  prefix?: string;
  /** The openssl command: serve TLS on TCP (and listen on 127.0.0.2 too). */
  tls?: string;
}): Promise<PgClusterPlace>;
export function stopPgCluster(dir: string, command?: string): void;
export function createTeamDatabase(
  admin: { query(text: string): Promise<unknown> },
  name: string,
  port: number,
): Promise<{ role: string; password: string; url: string }>;
