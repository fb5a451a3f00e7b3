import { ZmoduError } from '@zmodu/core';
/** A bad McpModule / createMcpSkillServer option, thrown at boot with what to fix. */
export class InvalidMcpOptionsException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidMcpOptionsException';
  }
}
