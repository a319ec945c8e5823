import { ValidationError, type ValidationMessages } from '../../infra/errors/index.js';
import { pathProblem } from '../../infra/reserved-names.js';

/** A path from a name when none is given: lower-case, dashes for runs of other characters. */
export function pathFromName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 255);
}

export function checkNameAndPath(name: string | undefined, path: string | undefined, topLevel: boolean): void {
  const messages: ValidationMessages = {};
  if (name !== undefined) {
    if (name.trim() === '') messages.name = ["can't be blank"];
    else if (name.length > 255) messages.name = ['is too long (maximum is 255 characters)'];
  }
  if (path !== undefined) {
    const problem = pathProblem(path, topLevel);
    if (problem) messages.path = [problem];
  }
  if (Object.keys(messages).length > 0) throw new ValidationError(messages);
}

export const VISIBILITIES = ['private', 'internal', 'public'] as const;
const RANK: Record<string, number> = { private: 0, internal: 1, public: 2 };

/** A project or subgroup may not be more visible than the group it lives in. */
export function checkVisibilityWithin(child: string, parent: string | null): void {
  if (parent !== null && (RANK[child] ?? 0) > (RANK[parent] ?? 0)) {
    throw ValidationError.field('visibility_level', `${child} is not allowed since the group is ${parent}`);
  }
}
