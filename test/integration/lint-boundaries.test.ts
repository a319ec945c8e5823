// The architecture boundaries are enforced by eslint.config.js (no-restricted-imports per folder):
// a module reaches another only through its index.ts, and src/infra imports no module. These fixtures
// are linted as if they lived in those folders, so a config change that loosens a boundary fails here.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The project's own config, with only the boundary rule run and without type information (the fixtures are
// not files of the TypeScript project, and the boundary rule needs none).
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: path.join(root, 'eslint.config.js'),
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
  ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
});

async function boundaryErrors(relativePath: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: path.join(root, relativePath) });
  assert.ok(result);
  const fatal = result.messages.filter((m) => m.fatal);
  assert.deepEqual(fatal, [], 'the fixture parses');
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('lint boundaries between modules and infra', () => {
  it('refuses an import of another module other than through its index.ts', async () => {
    const text = [
      "import { ProjectsService } from '../projects/projects.service.js';",
      "export type { Project } from '../projects/projects.schemas.js';",
      'export type Service = ProjectsService;',
      '',
    ].join('\n');
    const errors = await boundaryErrors('src/modules/alerts/lint-fixture.ts', text);
    assert.equal(errors.length, 2);
    for (const message of errors) assert.match(message, /only through its index\.ts/);
  });

  it('refuses a deep import from a file in a module subfolder', async () => {
    const text = "import type { ProjectsService } from '../../projects/projects.service.js';\nexport type S = ProjectsService;\n";
    const errors = await boundaryErrors('src/modules/oauth/grants/lint-fixture.ts', text);
    assert.equal(errors.length, 1);
  });

  it('refuses any import of src/modules from src/infra', async () => {
    const text = (up: string) =>
      [
        `import { createProjectsModule } from '${up}modules/projects/index.js';`,
        `import type { Alert } from '${up}modules/alerts/alerts.schemas.js';`,
        'export const both = [createProjectsModule, null as unknown as Alert];',
        '',
      ].join('\n');
    for (const [file, up] of [
      ['src/infra/lint-fixture.ts', '../'],
      ['src/infra/http/lint-fixture.ts', '../../'],
    ] as const) {
      const errors = await boundaryErrors(file, text(up));
      assert.equal(errors.length, 2, file);
      for (const message of errors) assert.match(message, /src\/infra imports no module/);
    }
  });

  it('accepts imports through index.ts, within the own module and of infra', async () => {
    const text = [
      "import { createProjectsModule } from '../projects/index.js';",
      "import type { Alert } from './alerts.schemas.js';",
      "import type { Clock } from '../../infra/clock.js';",
      "import { createAlertsModule } from '../alerts/index.js';",
      'export const all = [createProjectsModule, createAlertsModule, null as unknown as Alert, null as unknown as Clock];',
      '',
    ].join('\n');
    assert.deepEqual(await boundaryErrors('src/modules/alerts/lint-fixture.ts', text), []);
    const grants =
      "import type { Clock } from '../../../infra/clock.js';\nimport { x } from '../oauth.service.js';\nexport const y = [x, null as unknown as Clock];\n";
    assert.deepEqual(await boundaryErrors('src/modules/oauth/grants/lint-fixture.ts', grants), []);
    const infra = "import type { Clock } from '../clock.js';\nexport type C = Clock;\n";
    assert.deepEqual(await boundaryErrors('src/infra/http/lint-fixture.ts', infra), []);
  });
});
