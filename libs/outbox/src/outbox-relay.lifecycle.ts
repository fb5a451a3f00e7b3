import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { OutboxRelay } from './outbox-relay';
import { OUTBOX_OPTIONS } from './outbox.constants';
import { ResolvedOutboxOptions } from './outbox.options';

/**
 * Starts the relay after boot (unless autoStart is false) and stops it at shutdown, before any module's
 * onApplicationShutdown closes the database (TypeORM's DataSource): deliveries in flight settle while it still answers.
 */
@Injectable()
export class RelayLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly relay: OutboxRelay,
    @Inject(OUTBOX_OPTIONS) private readonly options: ResolvedOutboxOptions,
  ) {}

  onApplicationBootstrap(): void {
    for (const [topic, handler] of Object.entries(this.options.handlers)) this.relay.on(topic, handler);
    if (this.options.relay.autoStart !== false) this.relay.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.relay.stop();
  }
}
