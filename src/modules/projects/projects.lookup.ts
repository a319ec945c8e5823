import type { FastifyRequest } from 'fastify';
import { MethodNotAllowedError, MovedPermanentlyError, NotFoundError } from '../../infra/errors/index.js';
import type { AccessPolicy } from './access.policy.js';
import type { Found, GroupsService } from './groups.service.js';
import type { NamespaceRow } from './namespaces.repository.js';
import type { ProjectRow } from './projects.repository.js';
import type { ProjectsService } from './projects.service.js';

/** The request URL with the path segment that named `ref` replaced by the new full path. */
function movedLocation(request: FastifyRequest, ref: string, movedTo: string, externalUrl: string): string {
  const [path = '', query] = request.url.split('?', 2);
  const segments = path.split('/').map((segment) => {
    try {
      return decodeURIComponent(segment) === ref ? encodeURIComponent(movedTo) : segment;
    } catch {
      return segment;
    }
  });
  return `${externalUrl}${segments.join('/')}${query ? `?${query}` : ''}`;
}

/**
 * Finds the project or group named by `:id` for a route, applying the access policy and
 * answering renamed paths with 301 (GET) or 405 (other methods), as reference §3.1 says.
 * Other modules reach projects through this too.
 */
export class ProjectLookup {
  constructor(
    private readonly projects: ProjectsService,
    private readonly groups: GroupsService,
    private readonly access: AccessPolicy,
    private readonly externalUrl: string,
  ) {}

  async project(request: FastifyRequest, ref: string, minLevel = 0): Promise<{ project: ProjectRow; level: number }> {
    const found = await this.projects.findByRef(ref);
    // Only those who may read where it went learn that it moved (and where): a 404 to others.
    if (found.target) await this.access.checkProject(request.actor, found.target);
    const row = this.follow(request, ref, found, 'Project');
    return this.access.checkProject(request.actor, row, minLevel);
  }

  async group(request: FastifyRequest, ref: string, minLevel = 0): Promise<{ group: NamespaceRow; level: number }> {
    const found = await this.groups.findByRef(ref);
    if (found.target) await this.access.checkGroup(request.actor, found.target);
    const row = this.follow(request, ref, found, 'Group');
    return this.access.checkGroup(request.actor, row, minLevel);
  }

  /** The row; a moved one, which the caller may read, answers 301 (GET) or 405. */
  private follow<T>(request: FastifyRequest, ref: string, found: Found<T>, thing: 'Project' | 'Group'): T {
    if (found.row) return found.row;
    if (found.movedTo) {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        throw new MethodNotAllowedError(
          ['GET', 'HEAD'],
          `Non GET methods are not allowed for moved ${thing === 'Project' ? 'projects' : 'groups'}`,
        );
      }
      throw new MovedPermanentlyError(movedLocation(request, ref, found.movedTo, this.externalUrl));
    }
    throw new NotFoundError(thing);
  }
}
