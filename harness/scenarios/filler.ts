/**
 * Filler: seeded small-talk exchanges in English and Chinese that stretch a scenario for growth
 * curves (docs/design.md §2, `filler: N`). They mention other foods, dates, names, places, allergies and
 * kitchen gear so that they distract retrieval, but they are drawn from the fixed vocabulary
 * below, never from the scenario: the generator cannot see gold data.
 *
 * Scenario authors: keep `expect` and `forbid` strings off this vocabulary. It deliberately
 * leaves out weekday names, clock times, cooking oils, tofu, peanuts, shellfish, cast iron,
 * Shaoxing wine / 料酒, "teach me" / 教我, the number six / 六, "family of four" / 四口人, soy and
 * oat milk, the word "green", Shanghai and Hangzhou (上海, 杭州), which the built-in scenarios
 * probe; test/harness/scenarios/filler.test.ts checks every built-in scenario's strings against thousands
 * of generated turns, so a new built-in that collides fails there.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';
import type { FillerStep, Scenario, Step, UserStep } from './format.js';
import { fnv1aCodePoints } from '../core/hash.js';

/** Language of generated turns: `mixed` picks English or Chinese for each exchange. */
export type FillerLanguage = 'en' | 'zh' | 'mixed';

interface Template {
  user: string;
  assistant: string;
}

type Vocabulary = Record<string, readonly string[]>;

const EN_VOCABULARY: Vocabulary = {
  name: ['Nora', 'Marco', 'Priya', 'Tom', 'Lena', 'Omar', 'Greta', 'Hugo', 'Ines', 'Felix'],
  food: [
    'lasagna',
    'mushroom risotto',
    'lemon tart',
    'pad thai',
    'falafel wraps',
    'banana bread',
    'miso soup',
    'beef tacos',
    'pumpkin pie',
    'vegetable paella',
    'apple crumble',
    'chicken curry',
  ],
  place: ['Lisbon', 'Osaka', 'Vienna', 'Cape Town', 'Edinburgh', 'Montreal', 'Valencia', 'Kyoto'],
  date: [
    'on March 3rd',
    'next month',
    'on the 14th',
    'in late April',
    'over the summer',
    "on New Year's Eve",
    'in two weeks',
    'at the end of October',
  ],
  hobby: [
    'pottery',
    'bouldering',
    'chess',
    'birdwatching',
    'salsa dancing',
    'watercolour painting',
    'trail running',
    'the ukulele',
  ],
  allergen: ['celery', 'kiwi', 'sesame', 'strawberries', 'mango'],
  appliance: ['an air fryer', 'a rice cooker', 'a bread machine', 'a slow cooker', 'a stand mixer'],
  count: ['three', 'five', 'eight', 'ten', 'twelve'],
  drink: ['lemonade', 'iced coffee', 'mint tea', 'hot chocolate', 'sparkling water'],
  topic: ['Roman history', 'urban gardening', 'deep-sea fish', 'jazz piano', 'old maps'],
  relative: ['niece', 'uncle', 'grandmother', 'cousin', 'neighbour'],
  plant: ['fern', 'cactus', 'basil plant', 'orchid', 'rubber plant'],
  stain: ['coffee', 'grass', 'tomato sauce', 'blueberry'],
};

const EN_TEMPLATES: readonly Template[] = [
  {
    user: 'By the way, my friend {name} is visiting {date} and loves {food}. Any tips?',
    assistant:
      'Make the {food} a day ahead if you can, so you can spend the visit with {name} instead of in the kitchen.',
  },
  {
    user: "I've been getting into {hobby} lately. Is it normal to feel sore after the first week?",
    assistant:
      'Completely normal. Keep your {hobby} sessions short at first, rest in between, and it gets easier within a few weeks.',
  },
  {
    user: "What's the weather usually like in {place} {date}?",
    assistant: '{place} is usually mild around then, but it changes quickly. Pack layers and a light rain jacket.',
  },
  {
    user: "My colleague {name} can't eat {allergen}. Does {food} usually contain any?",
    assistant:
      "Traditional recipes for {food} don't need {allergen}, but ready-made sauces sometimes do, so read the labels and tell the restaurant.",
  },
  {
    user: 'We just bought {appliance}. Is it any good for {food}?',
    assistant:
      'It works well for {food}. Watch the timing the first time, since every machine runs a little differently.',
  },
  {
    user: 'How long can I keep homemade {food} in the freezer?',
    assistant: 'Sealed well, it keeps about two months frozen. Write the date on the box so you know.',
  },
  {
    user: 'There will be {count} of us at the picnic {date}. How much {drink} should I bring?',
    assistant: 'For {count} guests, plan on about a litre of {drink} each plus water, a bit more if it is hot.',
  },
  {
    user: '{name} recommended a book about {topic}. Is that a good subject to start with?',
    assistant: 'It is a friendly subject for a beginner. Skim the first chapter and see whether the style suits you.',
  },
  {
    user: "I'm planning a trip to {place} {date}. What should I not miss?",
    assistant:
      'In {place}, give the old town and the main food market a morning each, and book the popular places ahead.',
  },
  {
    user: 'Quick question: how do I get a {stain} stain out of a cotton shirt?',
    assistant:
      'Rinse it with cold water, dab on a little dish soap and wash as usual. Skip hot water until the {stain} is gone.',
  },
  {
    user: 'My {relative} has a birthday {date} and is really into {hobby}. Gift ideas?',
    assistant: 'For someone who loves {hobby}, a good starter kit or a voucher for a class usually goes down well.',
  },
  {
    user: 'I keep forgetting to water my {plant}. How often does it need it?',
    assistant: 'Once a week is plenty for a {plant}. Let the top of the soil dry out between waterings.',
  },
  {
    user: 'Which is easier for a beginner, {food} or {food2}?',
    assistant: "I'd start with {food}: it is more forgiving. Try {food2} once you feel confident.",
  },
  {
    user: 'Is {drink} better in the morning or in the afternoon?',
    assistant: 'Either is fine. If it has caffeine, keep {drink} to the morning so it does not spoil your sleep.',
  },
];

const ZH_VOCABULARY: Vocabulary = {
  name: ['小王', '李明', '阿芳', '张伟', '陈静', '老周', '小林', '赵磊'],
  food: ['饺子', '番茄炒蛋', '炸酱面', '小笼包', '凉面', '蛋炒饭', '糖醋排骨', '葱油饼', '羊肉串', '蒸鸡蛋羹'],
  place: ['成都', '西安', '青岛', '厦门', '苏州', '昆明', '大理', '哈尔滨'],
  date: ['三月三号', '下个月', '十四号', '四月底', '暑假的时候', '元旦', '两周以后', '国庆节'],
  hobby: ['爬山', '下棋', '练书法', '游泳', '弹吉他', '拍照', '跑步', '钓鱼'],
  allergen: ['海鲜', '芝麻', '猕猴桃', '芒果', '牛奶'],
  appliance: ['电饭煲', '空气炸锅', '面包机', '破壁机', '电炖锅'],
  count: ['三', '五', '八', '十', '十二'],
  drink: ['绿茶', '柠檬水', '冰美式', '酸梅汤', '热可可'],
  topic: ['唐朝历史', '阳台种菜', '深海鱼类', '爵士钢琴', '古地图'],
  relative: ['外甥女', '舅舅', '奶奶', '表哥', '邻居阿姨'],
  plant: ['绿萝', '仙人掌', '吊兰', '发财树', '薄荷'],
  stain: ['咖啡', '圆珠笔', '草汁', '番茄酱'],
};

const ZH_TEMPLATES: readonly Template[] = [
  {
    user: '对了，我朋友{name}{date}要来家里玩，特别爱吃{food}，有什么建议吗？',
    assistant: '{food}可以提前一天准备好，这样{name}来的时候你就不用一直待在厨房了。',
  },
  {
    user: '我最近迷上了{hobby}，第一周浑身酸痛正常吗？',
    assistant: '很正常。刚开始{hobby}每次时间短一点，中间多休息，几周后就适应了。',
  },
  {
    user: '{place}{date}天气一般怎么样？',
    assistant: '{place}那时候通常比较温和，不过变化快，带几件能叠穿的衣服和一件薄雨衣。',
  },
  {
    user: '我同事{name}不能吃{allergen}，{food}里一般会有吗？',
    assistant: '传统做法的{food}不需要{allergen}，但现成的酱料有时会有，记得看配料表，点菜时也跟店家说一声。',
  },
  {
    user: '我们刚买了一台{appliance}，用来做{food}合适吗？',
    assistant: '挺合适的。第一次做{food}注意看着时间，每台机器都有点不一样。',
  },
  { user: '自己做的{food}冷冻能放多久？', assistant: '密封好的话{food}冷冻能放两个月左右，记得在盒子上写上日期。' },
  {
    user: '{date}去野餐，一共{count}个人，带多少{drink}合适？',
    assistant: '{count}个人的话，每人准备一升左右的{drink}，再带些水，天热就多带一点。',
  },
  {
    user: '{name}推荐我读一本讲{topic}的书，适合入门吗？',
    assistant: '这个题目对新手挺友好的，先翻翻第一章，看看文风合不合你的口味。',
  },
  {
    user: '我打算{date}去{place}玩，有什么不能错过的？',
    assistant: '在{place}，老城区和美食街各值得花一个上午，热门的地方最好提前预约。',
  },
  {
    user: '棉衬衫上沾了{stain}，怎么洗掉？',
    assistant: '先用冷水冲一下，抹一点洗洁精轻轻搓，再正常洗。{stain}的印子没掉之前别用热水。',
  },
  {
    user: '我{relative}{date}过生日，特别喜欢{hobby}，送什么好？',
    assistant: '喜欢{hobby}的人，送一套好一点的入门装备或者一张体验课的券都不错。',
  },
  { user: '我老是忘记给{plant}浇水，它多久浇一次？', assistant: '{plant}一周浇一次就够了，等表层的土干了再浇。' },
  { user: '{food}和{food2}哪个更适合新手？', assistant: '{food}更容易上手，先从它开始，熟练了再试{food2}。' },
  { user: '{drink}是上午喝好还是下午喝好？', assistant: '都可以。要是有咖啡因，{drink}最好上午喝，免得影响睡眠。' },
];

const LANGUAGES = {
  en: { templates: EN_TEMPLATES, vocabulary: EN_VOCABULARY },
  zh: { templates: ZH_TEMPLATES, vocabulary: ZH_VOCABULARY },
} as const;

/** One generated exchange: a user message and its scripted reply. */
export interface FillerExchange {
  user: string;
  assistant: string;
}

function pick<T>(rng: RandomGenerator, items: readonly T[]): T {
  return items[uniformInt(rng, 0, items.length - 1)]!;
}

function exchange(rng: RandomGenerator, language: 'en' | 'zh'): FillerExchange {
  const { templates, vocabulary } = LANGUAGES[language];
  const template = pick(rng, templates);
  const values = new Map<string, string>();
  const fill = (text: string): string =>
    text.replace(/\{(\w+)\}/gu, (_match, slot: string) => {
      let value = values.get(slot);
      if (value === undefined) {
        const base = slot.replace(/\d+$/u, '');
        const pool = vocabulary[base]!;
        // `food2` must differ from `food`: draw again from the others.
        const taken = [...values.entries()]
          .filter(([key]) => key.replace(/\d+$/u, '') === base)
          .map(([, taken]) => taken);
        const choices = pool.filter((item) => !taken.includes(item));
        value = pick(rng, choices.length > 0 ? choices : pool);
        values.set(slot, value);
      }
      return value;
    });
  // A slot at the start of a sentence is capitalised after filling (English only).
  const sentenceCase = (text: string): string =>
    language === 'en'
      ? text.replace(/(^|[.!?]\s+)([a-z])/gu, (_m, lead: string, letter: string) => lead + letter.toUpperCase())
      : text;
  return { user: sentenceCase(fill(template.user)), assistant: sentenceCase(fill(template.assistant)) };
}

/** A 32-bit mix of two integers (murmur3 finaliser): one generator seed per (seed, step index). */
export function mixSeed(seed: number, index: number): number {
  let hash = Math.imul((seed | 0) ^ 0x9e3779b9, 0x85ebca6b) ^ (index | 0);
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) | 0;
}

/** `count` distractor exchanges, a pure function of (seed, language). */
export function generateFiller(count: number, options: { seed: number; language: FillerLanguage }): FillerExchange[] {
  const rng = xoroshiro128plus(options.seed);
  const out: FillerExchange[] = [];
  for (let i = 0; i < count; i++) {
    const language = options.language === 'mixed' ? (uniformInt(rng, 0, 1) === 0 ? 'en' : 'zh') : options.language;
    out.push(exchange(rng, language));
  }
  return out;
}

/** The filler language of a step: its own, else the scenario's (en / zh), else mixed. */
export function fillerLanguage(step: FillerStep, scenarioLanguage: string | undefined): FillerLanguage {
  if (step.language) return step.language;
  const language = scenarioLanguage?.toLowerCase() ?? '';
  if (language === 'en' || language.startsWith('en-')) return 'en';
  if (language === 'zh' || language.startsWith('zh-')) return 'zh';
  return 'mixed';
}

/**
 * Replaces every `filler: N` step by N generated `user` + `assistant` steps. Deterministic from
 * the run seed and the step's position (a step's own `seed` replaces the run seed), so every
 * strategy and trial of a run sees the same conversation: pass the run seed, not a cell seed.
 * Generated steps carry no ids, so they never collide with the scenario's own.
 */
export function expandFillers(scenario: Scenario, seed: number): Scenario {
  let changed = false;
  const expand = (steps: readonly Step[], path: string): Step[] => {
    const out: Step[] = [];
    steps.forEach((step, index) => {
      if (step.kind === 'filler') {
        changed = true;
        const stepSeed = mixSeed(step.seed ?? seed, hashPath(`${path}${index}`));
        for (const turn of generateFiller(step.filler, {
          seed: stepSeed,
          language: fillerLanguage(step, scenario.language),
        })) {
          const generated: UserStep = { kind: 'user', user: turn.user, assistant: turn.assistant };
          out.push(generated);
        }
      } else if (step.kind === 'concurrent') {
        out.push({
          ...step,
          concurrent: step.concurrent.map((session, sessionIndex) =>
            expand(session, `${path}${index}.${sessionIndex}.`),
          ),
        });
      } else {
        out.push(step);
      }
    });
    return out;
  };
  const steps = expand(scenario.steps, '');
  return changed ? { ...scenario, steps } : scenario;
}

/** Step positions inside `concurrent` blocks are paths ("3.1.0"): hashed to one index. */
function hashPath(path: string): number {
  return fnv1aCodePoints(path);
}

/** User turns a scenario holds (user, remember and forget steps; filler counts its N). */
export function userTurns(steps: readonly Step[]): number {
  return steps.reduce(
    (total, step) =>
      total +
      (step.kind === 'user' || step.kind === 'remember' || step.kind === 'forget'
        ? 1
        : step.kind === 'filler'
          ? step.filler
          : 0),
    0,
  );
}

/**
 * Stretches any scenario to `turns` user turns, probes kept: filler steps are spread evenly
 * before the scenario's own user steps (after the first), so old facts end up far from their
 * probes. The stretched scenario is named `NAME~TURNS` and tagged `long`. Returns the scenario
 * unchanged when it already has that many turns.
 */
export function stretchScenario(scenario: Scenario, turns: number): Scenario {
  const missing = turns - userTurns(scenario.steps);
  if (missing <= 0) return scenario;
  const gaps = scenario.steps.flatMap((step, index) =>
    index > 0 && (step.kind === 'user' || step.kind === 'remember' || step.kind === 'probe') ? [index] : [],
  );
  if (gaps.length === 0) gaps.push(scenario.steps.length);
  const steps: Step[] = [];
  let placed = 0;
  scenario.steps.forEach((step, index) => {
    const gap = gaps.indexOf(index);
    if (gap >= 0) {
      const share = Math.round(((gap + 1) * missing) / gaps.length) - placed;
      if (share > 0) steps.push({ kind: 'filler', filler: share });
      placed += share;
    }
    steps.push(step);
  });
  if (placed < missing) steps.push({ kind: 'filler', filler: missing - placed });
  return {
    ...scenario,
    name: `${scenario.name}~${turns}`,
    tags: [...new Set([...(scenario.tags ?? []), 'long'])],
    steps,
  };
}
