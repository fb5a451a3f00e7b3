import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';

/** helmet's headers (CSP, HSTS, X-Frame-Options, nosniff, ...; no X-Powered-By) and `Cache-Control: no-store`. */
export function securityHeaders(): (req: Request, res: Response, next: NextFunction) => void {
  const headers = helmet();
  return (req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    headers(req, res, next);
  };
}

/**
 * securityHeaders on every answer of AppModule's routes: API answers are per caller. What the application serves
 * outside Nest's pipeline (the OpenAPI routes, the JSON parser's refusals) gets them from serveHttp.
 */
@Injectable()
export class SecurityHeadersMiddleware implements NestMiddleware {
  private readonly handle = securityHeaders();

  use(req: Request, res: Response, next: NextFunction): void {
    this.handle(req, res, next);
  }
}
