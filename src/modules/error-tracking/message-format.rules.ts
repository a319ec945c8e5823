/**
 * The text of a `logentry` (or `message`) sent as `{message, params}` without `formatted`, as
 * sentry-python's logging integration sends every ERROR log record: Python's `%` operator
 * applied to the template, as Sentry's ingestion and GlitchTip format it (reference D). Grouping
 * keeps the template; only the text people read is formatted.
 *
 * Like Python's `logging`, a template without params is left as it is (`%` and all). Params
 * that do not fit the template (too few, a missing name, a list for named fields) leave the
 * template as it is too, rather than guessing.
 */

// %[(name)][flags][width][.precision][length modifier]conversion — Python's printf-style grammar.
// The name is bounded: an unbounded `[^)]*` rescans the rest of the template at every `%(` that
// is never closed, quadratic in a template a DSN holder chooses.
const SPECIFIER = /%(?:\(([^)]{0,128})\))?[-#0 +]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[hlL]?([diouxXeEfFgGcrsa%])/g;
/** Longer templates are shown as sent: the title keeps 255 characters and the message 1,024. */
const MAX_TEMPLATE = 8192;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `str()` or `repr()` of a JSON value, as Python would print it. */
function pythonText(value: unknown, conversion: string): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') {
    if ('diu'.includes(conversion)) return String(Math.trunc(value));
    return String(value);
  }
  if (typeof value === 'string') return conversion === 'r' || conversion === 'a' ? `'${value.replaceAll("'", "\\'")}'` : value;
  return JSON.stringify(value);
}

export function formatLogMessage(template: string, params: unknown): string | undefined {
  const named = isObject(params);
  const positional = Array.isArray(params) ? params : null;
  if (template.length > MAX_TEMPLATE) return undefined;
  if (!named && (positional === null || positional.length === 0)) return undefined;
  let next = 0;
  let fits = true;
  const text = template.replace(SPECIFIER, (spec: string, name: string | undefined, conversion: string) => {
    if (conversion === '%' && name === undefined) return '%';
    if (spec.includes('*')) fits = false;
    if (name !== undefined) {
      if (!named || !Object.hasOwn(params, name)) fits = false;
      return named ? pythonText(params[name], conversion) : spec;
    }
    if (positional === null || next >= positional.length) {
      fits = false;
      return spec;
    }
    return pythonText(positional[next++], conversion);
  });
  // Python raises for params left over (`not all arguments converted`): the template stays.
  if (!fits || (positional !== null && next !== positional.length)) return undefined;
  return text;
}
