import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GuardModule } from '@zmodu/guard';
import { Skill } from './skill.decorator';
import { SkillRegistry } from './skill.registry';
import { SkillsModule } from './skills.module';

@Injectable()
class Quotes {
  @Skill({ name: 'market.quote', action: 'read', description: 'Quote' })
  quote() {
    return 1;
  }
}

@Injectable()
class OtherQuotes {
  @Skill({ name: 'market.quote', action: 'read', description: 'Quote, again' })
  quoteAgain() {
    return 2;
  }
}

@Module({ providers: [Quotes] })
class FeatureModule {}

const guard = GuardModule.forRoot({ auditStore: 'memory', quotaStore: 'memory' });

describe('SkillExplorer', () => {
  it('finds @Skill methods on providers of any module at boot', async () => {
    const app = await Test.createTestingModule({ imports: [guard, SkillsModule.forRoot(), FeatureModule] }).compile();
    await app.init();
    expect(
      app
        .get(SkillRegistry)
        .list()
        .map((s) => s.name),
    ).toEqual(['market.quote']);
    await app.close();
  });

  it('fails boot on a duplicate name, naming both providers', async () => {
    const app = await Test.createTestingModule({
      imports: [guard, SkillsModule.forRoot(), FeatureModule],
      providers: [OtherQuotes],
    }).compile();
    await expect(app.init()).rejects.toThrow(
      /Duplicate skill name 'market\.quote'.*(Quotes\.quote.*OtherQuotes\.quoteAgain|OtherQuotes\.quoteAgain.*Quotes\.quote)/,
    );
  });
});
