export { DataException } from './data.exception';
export { InvalidDataOptionsException } from './invalid-data-options.exception';
export { InvalidIdentifierException } from './invalid-identifier.exception';
export { DataModelHazardException } from './data-model-hazard.exception';
export { FenceMissingException } from './fence-missing.exception';
export { SqlParserNotLoadedException } from './sql-parser-not-loaded.exception';
export { TenantFenceError } from './tenant-fence.exception';
