import { DataException } from './data.exception';

/** DataSkillsModule's options are wrong (limits, entities, kpis, reports, references): thrown at boot. */
export class InvalidDataOptionsException extends DataException {}
