export interface PgClusterPlace {
  dir: string;
  port: number;
  socketDir: string;
}
export function startPgCluster(options: {
  command?: string;
  password: string;
  prefix?: string;
}): Promise<PgClusterPlace>;
export function stopPgCluster(dir: string, command?: string): void;
