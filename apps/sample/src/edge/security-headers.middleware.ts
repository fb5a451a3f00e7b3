import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';

/** helmet's headers (and no X-Powered-By) on every answer, and `Cache-Control: no-store`: API answers are per caller. */
@Injectable()
export class SecurityHeadersMiddleware implements NestMiddleware {
  private readonly helmet = helmet();

  use(req: Request, res: Response, next: NextFunction): void {
    res.setHeader('Cache-Control', 'no-store');
    this.helmet(req, res, next);
  }
}
