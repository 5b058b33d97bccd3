import { z } from 'zod';
import { PIPELINE_FLAGS } from '../../options/command-flags.js';
import { withCompanyFilters } from '../companies/filters.js';
import { flagShape } from '../shared/flags.js';

/** `prospect pipeline`: its flags (the input) and the job's options (the output). */
export const pipelineOptionsSchema = withCompanyFilters(flagShape(PIPELINE_FLAGS));
export type PipelineFlags = z.input<typeof pipelineOptionsSchema>;
export type PipelineOptions = z.output<typeof pipelineOptionsSchema>;
