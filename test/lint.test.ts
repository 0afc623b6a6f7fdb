/**
 * The linter and the formatter run in `npm test` (`npm run lint` before jest); this shows that
 * both fail on a violation: test/lint-fixtures/unused-binding.ts has an unused binding and is not
 * formatted. (The fixture folder is ignored by the tree-wide run.)
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const fixture = path.join(root, 'test', 'lint-fixtures', 'unused-binding.ts');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

function run(command: string, args: string[]): { code: number; output: string } {
  try {
    return { code: 0, output: execFileSync(command, args, { cwd: root, encoding: 'utf8', stdio: 'pipe' }) };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, output: `${e.stdout}${e.stderr}` };
  }
}

describe('lint and format rules', () => {
  it('ESLint refuses an unused binding', () => {
    const { code, output } = run(bin('eslint'), ['--no-ignore', '--max-warnings', '0', fixture]);
    expect(code).not.toBe(0);
    expect(output).toContain("'unused' is assigned a value but never used");
  });

  it('Prettier refuses an unformatted file', () => {
    const { code, output } = run(bin('prettier'), ['--check', '--ignore-path', '', fixture]);
    expect(code).not.toBe(0);
    expect(output).toContain('unused-binding.ts');
  });
});
