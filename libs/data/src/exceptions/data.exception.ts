import { ZmoduError } from '@zmodu/core';
/** The base of @zmodu/data's exceptions (boot and configuration errors; a refused skill call is a SkillError instead). */
export class DataException extends ZmoduError {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
