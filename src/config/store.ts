/** Values read from the config file. Filled in by the configuration work (issue 6). */
export interface ConfigValues {
  apiKey?: string;
  baseUrl?: string;
  cursorParam?: string;
}

export function readConfigValues(_env: NodeJS.ProcessEnv): ConfigValues {
  return {};
}
