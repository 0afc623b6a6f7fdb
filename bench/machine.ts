/** The machine and software the figures came from. */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  arch: string;
  node: string;
  date: string;
  gitCommit: string;
  gitDirty: boolean;
  packages: Record<string, string>;
}

function git(root: string, args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

function installedVersion(root: string, name: string): string {
  try {
    return (JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

export function machineInfo(root: string): MachineInfo {
  const cpus = os.cpus();
  const packages: Record<string, string> = {};
  for (const name of [
    '@aws-sdk/client-dynamodb',
    '@aws-sdk/client-kms',
    '@aws-sdk/client-sqs',
    '@aws-sdk/client-s3',
    '@middy/core',
    'ajv',
    'esbuild',
    'dynalite',
    'fauxqs',
    '@medplum/core',
    'hl7v2',
    'node-hl7-client',
  ]) {
    packages[name] = installedVersion(root, name);
  }
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: `${os.type()} ${os.release()}`,
    arch: process.arch,
    node: process.version,
    date: new Date().toISOString(),
    gitCommit: git(root, ['rev-parse', '--short', 'HEAD']),
    gitDirty: git(root, ['status', '--porcelain']) !== '',
    packages,
  };
}
