/**
 * The size of a text as a Lambda proxy response (or event) carries it: inside a JSON string, UTF-8
 * encoded (CR, LF, tab, `\` and `"` take two bytes, other control characters six). The exports
 * measure their size budgets with it.
 */

/** Bytes `text` takes inside a JSON string, UTF-8 encoded. */
export function jsonStringBytes(text: string): number {
  let bytes = 2;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x80) {
      bytes += code === 0x22 || code === 0x5c || code === 0x0d || code === 0x0a || code === 0x09 ? 2 : code < 0x20 ? 6 : 1;
    } else if (code < 0x800) {
      bytes += 2;
    } else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      index += 1;
    } else {
      bytes += 3;
    }
  }
  return bytes;
}
