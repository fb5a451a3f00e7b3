import { Controller, Get } from '@nestjs/common';
import { Public } from './auth/require-permission.decorator';

@Controller('health')
export class HealthController {
  @Get()
  @Public()
  health() {
    return { status: 'ok' };
  }
}
