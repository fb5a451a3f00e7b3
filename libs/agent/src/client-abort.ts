import { createParamDecorator, ExecutionContext } from '@nestjs/common';

/** What an HTTP response must offer to tell that its client went away: Node's ServerResponse (express's, fastify's `raw`). */
export interface ClientResponse {
  once(event: 'close', listener: () => void): unknown;
  readonly writableEnded: boolean;
  readonly destroyed?: boolean;
  readonly socket?: { readonly destroyed?: boolean } | null;
}

/** The reason of the signal's abort. */
export const CLIENT_GONE_MESSAGE = 'the HTTP client went away before its answer was sent';

/**
 * A signal that aborts when the HTTP client goes away before its answer was sent: the connection closed while the
 * response was not ended (a client that disconnects, or times out, on a plain JSON answer as on a stream). Give it to
 * `Agent.run` as `signal` so that a caller who left does not keep the model request (and the tool call) in flight: the
 * run ends `aborted`. A response whose connection is already gone aborts it at once; one answered in full never does.
 */
export function clientAbortSignal(res: ClientResponse): AbortSignal {
  const controller = new AbortController();
  const gone = () => {
    if (!res.writableEnded) controller.abort(new Error(CLIENT_GONE_MESSAGE));
  };
  if (res.destroyed || res.socket?.destroyed) gone();
  else res.once('close', gone);
  return controller.signal;
}

/**
 * The parameter decorator of a Nest HTTP handler that runs an agent: `@ClientAbortSignal() signal: AbortSignal`, the
 * handler's clientAbortSignal (no `@Res()` needed).
 *
 * @example
 * async run(@Body() body: RunGoalDto, @ClientAbortSignal() signal: AbortSignal) {
 *   return this.agents.get('trader').run(body.goal, { ...caller, signal });
 * }
 */
export const ClientAbortSignal = createParamDecorator((_: unknown, ctx: ExecutionContext): AbortSignal =>
  clientAbortSignal(ctx.switchToHttp().getResponse<ClientResponse>()),
);
