/** Tables laid out to a terminal's width: columns that do not fit go to a further table, none wraps. */
import { describe, expect, it } from 'vitest';
import { columnWidths, fitColumns, fittedTable, tableWidth, wrapText } from '../../reports/layout.js';
import { renderConsoleSummary } from '../../reports/console.js';
import { renameScenario, smallRun } from './fixture.js';

/** Display columns of a line: Han characters take two. */
const columns = (line: string): number =>
  [...line].reduce((sum, char) => sum + (/\p{Script=Han}|[，。？]/u.test(char) ? 2 : 1), 0);

const head = ['setting', 'alpha', 'beta', 'gamma', 'delta'];
const rows = [
  ['summary-buffer(maxTokenLimit=1000)', 'a'.repeat(30), 'b'.repeat(30), 'c'.repeat(30), 'd'.repeat(10)],
  ['窗口', 'x', 'y', 'z', 'w'],
];

describe('tables laid out to a width', () => {
  it('measures columns as a terminal shows them (a Han character is two)', () => {
    expect(columnWidths(['k', 'v'], [['窗口', 'abc']])).toEqual([4, 3]);
  });

  it('measures each column as wide as cli-table3 lays it out: lines, emoji, CJK, empty cells', () => {
    const cells = [
      ['setting', 'recall', 'note', ''],
      ['buffer', '0.50', 'two\nlines, the second longer', '🙂🙂'],
      ['窗口(k=2)', '', '汉字 and text', 'x'],
    ];
    const [tableHead, ...tableRows] = cells;
    const top = fittedTable(tableHead!, tableRows, { width: 1_000 }).split('\n')[0]!;
    // The top border: one ─ per column of each cell, its padding (a space each side) included.
    const rendered = top
      .slice(1, -1)
      .split('┬')
      .map((segment) => [...segment].length - 2);
    expect(columnWidths(tableHead!, tableRows)).toEqual(rendered);
    expect(rendered).toEqual([9, 6, 24, 4]);
  });

  it('writes the control characters of a cell or a head as escapes, measured as they are printed', () => {
    // An ESC from a group name or a probe label would recolour the terminal (cli-table3 measures it as a colour code, zero wide).
    const printed = fittedTable(['setting', 'lab\u001b]0;title\u0007'], [['grp\u001b[31mRED\rover', '1.00']], {
      width: 1_000,
    });
    expect(printed).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u);
    const lines = printed.split('\n');
    expect(lines).toContain('│ setting                    │ lab\\u001b]0;title\\u0007 │');
    expect(lines).toContain('│ grp\\u001b[31mRED\\u000dover │ 1.00                    │');
    // Every line as wide as the top border: the columns fit the escapes.
    expect(new Set(lines.map((line) => [...line].length)).size).toBe(1);
    expect(wrapText('a\u0007b c', 3)).toBe('a\\u0007b\nc');
  });

  it('moves the columns that do not fit to a further table, the key column repeated, in order, none lost', () => {
    const parts = fitColumns(head, rows, 120);
    expect(parts.map((part) => part.head)).toEqual([
      ['setting', 'alpha', 'beta'],
      ['setting', 'gamma', 'delta'],
    ]);
    expect(parts[1]!.rows[1]).toEqual(['窗口', 'z', 'w']);
    expect(fitColumns(head, rows, 1000)).toHaveLength(1);
    // Every line of the laid-out table fits, at any width the key column leaves room in.
    for (const width of [80, 100, 120]) {
      for (const line of fittedTable(head, rows, { width }).split('\n'))
        expect(columns(line)).toBeLessThanOrEqual(width);
    }
  });

  it('keeps several key columns in every part', () => {
    const parts = fitColumns(['scenario', 'strategy', 'x', 'y'], [['s', 't', 'x'.repeat(60), 'y'.repeat(60)]], 100, 2);
    expect(parts.map((part) => part.head)).toEqual([
      ['scenario', 'strategy', 'x'],
      ['scenario', 'strategy', 'y'],
    ]);
  });

  it("takes a terminal's width, 120 columns when the output is not one", () => {
    expect(tableWidth({ isTTY: true, columns: 90 })).toBe(90);
    expect(tableWidth({ isTTY: false, columns: 90 })).toBe(120);
    expect(tableWidth({})).toBe(120);
  });

  it('cuts prose at spaces', () => {
    expect(wrapText('aaa bbb ccc', 7)).toBe('aaa bbb\nccc');
    expect(wrapText('a-very-long-word b', 5)).toBe('a-very-long-word\nb');
  });

  it('cuts Chinese prose by its width (a hanzi two columns) between characters, never before closing punctuation', () => {
    // A strategy's error in Chinese, on a FAILED line: 91 characters, 158 columns, printed whole at 120.
    const failed =
      'FAILED caipu/wode: 无法连接到向量数据库：请检查配置文件中的地址和端口是否正确，并确认服务已经启动，然后重新运行这个基准测试。如果问题仍然存在请联系管理员';
    expect(wrapText(failed, 120).split('\n')).toEqual([
      'FAILED caipu/wode: 无法连接到向量数据库：请检查配置文件中的地址和端口是否正确，并确认服务已经启动，然后重新运行这个基准',
      '测试。如果问题仍然存在请联系管理员',
    ]);
    // The full-width colon and comma stay at the end of a line with the hanzi before them.
    expect(wrapText(failed, 40).split('\n')).toEqual([
      'FAILED caipu/wode: 无法连接到向量数据',
      '库：请检查配置文件中的地址和端口是否正',
      '确，并确认服务已经启动，然后重新运行这个',
      '基准测试。如果问题仍然存在请联系管理员',
    ]);
    expect(wrapText('我喜欢Python和TypeScript编程，ok', 10)).toBe('我喜欢\nPython和\nTypeScript\n编程，ok');
  });

  it('prints the whole console summary within the width, Chinese scenario names included', () => {
    const result = renameScenario(smallRun(), 'recipes-zh', '红烧肉-菜谱');
    for (const width of [100, 120]) {
      const text = renderConsoleSummary(result, { width });
      const over = text.split('\n').filter((line) => columns(line) > width);
      expect(over).toEqual([]);
    }
    expect(
      renderConsoleSummary(result, { width: 1000 })
        .split('\n')
        .some((line) => columns(line) > 120),
    ).toBe(true);
  });
});
