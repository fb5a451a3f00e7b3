import { SCHEDULE_PACKAGE_MESSAGE } from '../agent.messages';
import { ZmoduError } from '@zmodu/core';

/** A boot error: scheduled jobs or `@AgentCron` are used, and `@nestjs/schedule` cannot be loaded (not installed, or a Node.js that cannot require an ES module). */
export class SchedulePackageUnavailableException extends ZmoduError {
  constructor(use: string, problem: string) {
    super(SCHEDULE_PACKAGE_MESSAGE(use, problem));
    this.name = 'SchedulePackageUnavailableException';
  }
}
