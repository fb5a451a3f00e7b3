import { BadRequestException, Inject, Injectable, NestMiddleware, PayloadTooLargeException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { EDGE_OPTIONS, EdgeOptions } from './edge.options';

/** Routes whose bodies are small by nature: an agent run's goal, an approval decision (and its preview: no larger). */
const SMALL_BODY_ROUTES = [/^\/agents\/[^/]+\/runs\/?$/i, /^\/admin\/approvals\/[^/]+\/(approve|reject|preview)\/?$/i];

/**
 * Checks a JSON body before anything walks it: over the route's size limit is a 413; nested
 * deeper than `maxBodyDepth` a 400 (field "body"). The depth scan is iterative and stops at
 * the limit, so a body nested 45,000 deep costs microseconds, not a RangeError in validation.
 */
@Injectable()
export class BodyLimitsMiddleware implements NestMiddleware {
  constructor(@Inject(EDGE_OPTIONS) private readonly options: EdgeOptions) {}

  use(req: Request, _res: Response, next: NextFunction): void {
    // The path as the router sees it (a request target in absolute form, http://host/admin/..., is routed by its path too).
    const path = routePath(req.originalUrl ?? req.url);
    const limit = SMALL_BODY_ROUTES.some((r) => r.test(path)) ? this.options.smallBodyBytes : this.options.defaultBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
    const body: unknown = req.body;
    if (body !== null && typeof body === 'object') {
      if (deeperThan(body, this.options.maxBodyDepth))
        throw new BadRequestException({ message: `The JSON body nests deeper than ${this.options.maxBodyDepth} levels.`, field: 'body' });
      // Chunked bodies declare no length: measure the parsed body (shallow now, so safe to serialize).
      if (!Number.isFinite(declared) && Buffer.byteLength(JSON.stringify(body)) > limit) throw tooLarge(limit);
    }
    next();
  }
}

function routePath(url: string): string {
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return url.split('?')[0];
  }
}

function tooLarge(limit: number): PayloadTooLargeException {
  return new PayloadTooLargeException({
    message: `The body is larger than ${limit} bytes, the limit of this route.`,
    field: 'body',
    limit,
  });
}

/** True when `value` nests arrays/objects more than `max` levels deep; iterative, stops as soon as it knows. */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node as object))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
