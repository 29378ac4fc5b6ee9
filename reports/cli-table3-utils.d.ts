/** cli-table3's own helpers (the package has no entry for them; its files are not hidden behind an `exports` map). */
declare module 'cli-table3/src/utils.js' {
  const utils: {
    /** The display width cli-table3 lays a cell out with: its widest line, colour codes left out, a CJK character two columns. */
    strlen(text: string): number;
  };
  export default utils;
}
