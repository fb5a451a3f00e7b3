import { Injectable, Module, Scope } from '@nestjs/common';
import { InvalidSkillDefinitionException } from './exceptions/invalid-skill-definition.exception';
import { skillsTestingModule } from './__fixtures__/skills-testing-module';
import { Skill } from './skill.decorator';
import { SkillRegistry } from './skill.registry';

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

@Injectable({ scope: Scope.REQUEST })
class PerRequestQuotes {
  @Skill({ name: 'market.quote.request', action: 'read', description: 'Quote per request' })
  quote() {
    return 3;
  }
}

@Module({ providers: [Quotes] })
class FeatureModule {}

describe('SkillExplorer', () => {
  it('finds @Skill methods on providers of any module at boot', async () => {
    const app = await skillsTestingModule({ imports: [FeatureModule] });
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
    const app = await skillsTestingModule({ imports: [FeatureModule], providers: [OtherQuotes] });
    await expect(app.init()).rejects.toThrow(
      /Duplicate skill name 'market\.quote'.*(Quotes\.quote.*OtherQuotes\.quoteAgain|OtherQuotes\.quoteAgain.*Quotes\.quote)/,
    );
  });

  it('fails boot on a skill of a request-scoped provider, saying where to read request data', async () => {
    const app = await skillsTestingModule({ providers: [PerRequestQuotes] });
    const boot = app.init();
    await expect(boot).rejects.toThrow(InvalidSkillDefinitionException);
    await expect(boot).rejects.toThrow(/'market\.quote\.request'.*PerRequestQuotes\.quote.*request-scoped.*SkillInvocation context/);
  });
});
