import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { OutboxRelay } from './outbox-relay';
import { OUTBOX_OPTIONS } from './outbox.constants';
import { ResolvedOutboxOptions } from './outbox.options';

/** Starts the relay after boot (unless autoStart is false) and stops it at shutdown. */
@Injectable()
export class RelayLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly relay: OutboxRelay,
    @Inject(OUTBOX_OPTIONS) private readonly options: ResolvedOutboxOptions,
  ) {}

  onApplicationBootstrap(): void {
    for (const [topic, handler] of Object.entries(this.options.handlers)) this.relay.on(topic, handler);
    if (this.options.relay.autoStart !== false) this.relay.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.relay.stop();
  }
}
