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
