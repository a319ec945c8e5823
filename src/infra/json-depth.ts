/** Nesting depth of parsed JSON (a scalar is 0, `{}` is 1). */
export function jsonDepth(value: unknown, limit: number): number {
  // Iterative so a hostile document cannot overflow the stack before we refuse it.
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    const here = depth + 1;
    if (here > max) max = here;
    if (max > limit) return max;
    for (const child of Array.isArray(node) ? node : Object.values(node))
      if (typeof child === 'object' && child !== null) stack.push([child, here]);
  }
  return max;
}

/**
 * Whether JSON text nests deeper than `limit`, read from the text before it is parsed: a
 * document of a few hundred KiB can hold 400,000 nested arrays, which JSON.parse builds
 * (tens of MiB and 100 ms per request) before any check on the parsed value could refuse it.
 * Brackets inside strings do not count; the text need not be valid JSON.
 */
export function jsonTextTooDeep(text: string, limit: number): boolean {
  if (text.length <= limit) return false;
  // Most documents open fewer brackets than the limit in all: counted with indexOf (fast),
  // they need no walk.
  let opens = 0;
  for (let i = text.indexOf('{'); i !== -1 && opens <= limit; i = text.indexOf('{', i + 1)) opens += 1;
  for (let i = text.indexOf('['); i !== -1 && opens <= limit; i = text.indexOf('[', i + 1)) opens += 1;
  if (opens <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      // A backslash escapes the next character.
      if (c === 92) i += 1;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth += 1;
      if (depth > limit) return true;
    } else if (c === 93 || c === 125) depth -= 1;
  }
  return false;
}
