import { InvalidChannelException } from '../exceptions/invalid-channel.exception';
import { DEFAULT_WEBHOOK_TIMEOUT_MS, resolveNotifyOptions } from './notify.options';
import { ChannelSpec } from './notify.types';

describe('resolveNotifyOptions', () => {
  const secret = 'a-secret-of-enough-length';

  it("defaults a webhook's timeout once, on a copy: the caller's channels stay as they were", () => {
    const channels: Record<string, ChannelSpec> = {
      ops: { type: 'webhook', url: 'https://hooks.example/ops', secret },
      slow: { type: 'webhook', url: 'https://hooks.example/slow', secret, timeoutMs: 9000 },
    };
    const resolved = resolveNotifyOptions({ channels });
    expect(resolved.channels.ops).toMatchObject({ timeoutMs: DEFAULT_WEBHOOK_TIMEOUT_MS });
    expect(resolved.channels.slow).toMatchObject({ timeoutMs: 9000 });
    expect(channels.ops).not.toHaveProperty('timeoutMs');
    expect(resolveNotifyOptions(undefined).channels).toEqual({});
  });

  it('refuses a channel that cannot work, saying what to fix', () => {
    expect(() => resolveNotifyOptions({ channels: { Ops: { type: 'sink', handler: () => undefined } } })).toThrow(InvalidChannelException);
    expect(() => resolveNotifyOptions({ channels: { ops: { type: 'webhook', url: 'ftp://x', secret } } })).toThrow(/url must be http\(s\)/);
    expect(() => resolveNotifyOptions({ channels: { ops: { type: 'webhook', url: 'https://x', secret: 'short' } } })).toThrow(
      /secret of 16\+ characters/,
    );
  });
});
