import { z } from 'zod';
import { withCompanyFilters } from '../companies/filters.js';
import { contactOptions } from '../contacts/options.js';
import {
  keepEmptyOption,
  outputOptions,
  presetOption,
  summaryOption,
  suppressionOptions,
  verifyCacheOptions,
} from '../shared/flags.js';

/** `prospect pipeline`: its flags (the input) and the job's options (the output). */
export const pipelineOptionsSchema = withCompanyFilters({
  ...contactOptions,
  ...outputOptions,
  ...presetOption,
  ...summaryOption,
  ...verifyCacheOptions,
  ...suppressionOptions,
  ...keepEmptyOption,
  max: z.number().int().optional(),
  state: z.string().optional(),
  onlyNew: z.boolean().default(false),
  allowEmpty: z.boolean().default(false),
  dryRun: z.boolean().default(false),
});
export type PipelineFlags = z.input<typeof pipelineOptionsSchema>;
export type PipelineOptions = z.output<typeof pipelineOptionsSchema>;
