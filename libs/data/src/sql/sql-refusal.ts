import { ZmoduError } from '@zmodu/core';
/** Why db.query refused a statement; `reason` is a stable code, `message` tells the model what to do instead. */
export class SqlRefusal extends ZmoduError {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'SqlRefusal';
  }
}

export const refuse = (reason: string, message: string): never => {
  throw new SqlRefusal(reason, message);
};
