import { ChannelSpec } from './notify.types';

/** Options of `NotifyModule.forRoot` / `forRootAsync`. */
export class NotifyModuleOptions {
  /** The channels notification.send may use, by name: nothing else is reachable. Default none. */
  channels: Record<string, ChannelSpec> = {};
}

const CHANNEL_NAME = /^[a-z][a-z0-9_.-]*$/;

/** The options with their defaults, merged once; a channel that cannot work fails boot saying what to fix. */
export function resolveNotifyOptions(raw: Partial<NotifyModuleOptions> | undefined): NotifyModuleOptions {
  const options = Object.assign(new NotifyModuleOptions(), withoutUndefined(raw));
  for (const [name, spec] of Object.entries(options.channels)) {
    if (!CHANNEL_NAME.test(name)) throw new Error(`NotifyModule: channel name ${JSON.stringify(name)} must be lower-case.`);
    if (spec.type === 'webhook') {
      let url: URL;
      try {
        url = new URL(spec.url);
      } catch {
        throw new Error(`NotifyModule: channel ${name}: url is not a URL.`);
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`NotifyModule: channel ${name}: url must be http(s).`);
      if (!spec.secret || spec.secret.length < 16)
        throw new Error(`NotifyModule: channel ${name}: a webhook needs a secret of 16+ characters to sign with.`);
    } else if (spec.type === 'sink') {
      if (typeof spec.handler !== 'function') throw new Error(`NotifyModule: channel ${name}: a sink needs a handler function.`);
    } else if (spec.type === 'outbox') {
      if (!spec.topic) throw new Error(`NotifyModule: channel ${name}: an outbox channel needs a topic.`);
    } else throw new Error(`NotifyModule: channel ${name}: type must be webhook, sink or outbox.`);
  }
  return options;
}

function withoutUndefined<T extends object>(raw: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(raw ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
