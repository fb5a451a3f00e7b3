/** Internal: PipelineModule's options with their defaults, merged once (from PIPELINE_MODULE_OPTIONS, as given to forRoot/forRootAsync). */
export const PIPELINE_OPTIONS = Symbol('zmodu:PIPELINE_OPTIONS');
