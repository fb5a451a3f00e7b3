import { ownOptions } from '@zmodu/core';
import { InvalidChannelException } from '../exceptions/invalid-channel.exception';
import { CHANNEL_NAME_MESSAGE, CHANNEL_PROBLEM_MESSAGE } from '../outbox.messages';
import { ChannelSpec } from './notify.types';

/** Per attempt of a webhook channel without `timeoutMs`. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5000;

/** Options of `NotifyModule.forRoot` / `forRootAsync`. */
export class NotifyModuleOptions {
  /** The channels notification.send may use, by name: nothing else is reachable. Default none. */
  channels: Record<string, ChannelSpec> = {};
}

const CHANNEL_NAME = /^[a-z][a-z0-9_.-]*$/;

/** The options with their defaults, merged once; a channel that cannot work fails boot saying what to fix. */
export function resolveNotifyOptions(raw: Partial<NotifyModuleOptions> | undefined): NotifyModuleOptions {
  const options = Object.assign(new NotifyModuleOptions(), ownOptions(raw));
  for (const [name, spec] of Object.entries(options.channels)) {
    if (!CHANNEL_NAME.test(name)) throw new InvalidChannelException(CHANNEL_NAME_MESSAGE(name));
    if (spec.type === 'webhook') {
      let url: URL;
      try {
        url = new URL(spec.url);
      } catch {
        throw new InvalidChannelException(CHANNEL_PROBLEM_MESSAGE(name, 'url is not a URL: give an absolute http(s) URL'));
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:')
        throw new InvalidChannelException(CHANNEL_PROBLEM_MESSAGE(name, 'url must be http(s)'));
      if (!spec.secret || spec.secret.length < 16)
        throw new InvalidChannelException(CHANNEL_PROBLEM_MESSAGE(name, 'a webhook needs a secret of 16+ characters to sign with'));
    } else if (spec.type === 'sink') {
      if (typeof spec.handler !== 'function')
        throw new InvalidChannelException(CHANNEL_PROBLEM_MESSAGE(name, 'a sink needs a handler function'));
    } else if (spec.type === 'outbox') {
      if (!spec.topic) throw new InvalidChannelException(CHANNEL_PROBLEM_MESSAGE(name, 'an outbox channel needs a topic'));
    } else throw new InvalidChannelException(CHANNEL_PROBLEM_MESSAGE(name, 'type must be webhook, sink or outbox'));
  }
  // A copy (the caller's object stays as it was), with each webhook's timeout defaulted here, once.
  options.channels = Object.fromEntries(
    Object.entries(options.channels).map(([name, spec]) => [
      name,
      spec.type === 'webhook' ? { ...spec, timeoutMs: spec.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS } : spec,
    ]),
  );
  return options;
}
