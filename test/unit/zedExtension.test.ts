/** The Zed extension's manifest agrees with its Rust code and with Zed's rules. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';

const manifest = readFileSync(`${REPO}zed-extension/extension.toml`, 'utf8');
const rust = readFileSync(`${REPO}zed-extension/src/resolve.rs`, 'utf8');
const cargo = readFileSync(`${REPO}zed-extension/Cargo.toml`, 'utf8');

const value = (key: string) => new RegExp(`^${key}\\s*=\\s*"([^"]*)"`, 'm').exec(manifest)?.[1];

describe('zed-extension', () => {
  it('registers the server id the Rust code asks Zed about', () => {
    const servers = [...manifest.matchAll(/^\[language_servers\.([^\]]+)\]/gm)].map((m) => m[1]);
    const rustId = /pub const SERVER_ID: &str = "([^"]+)"/.exec(rust)?.[1];
    expect(servers).toEqual([rustId]);
    expect(/pub const PACKAGE: &str = "([^"]+)"/.exec(rust)?.[1]).toBe(JSON.parse(readFileSync(`${REPO}package.json`, 'utf8')).name);
  });

  it('follows Zed\'s rules: id and name without "zed" or "extension", a cdylib, a license inside', () => {
    for (const field of [value('id'), value('name')]) {
      expect(field).toBeTruthy();
      expect(field!.toLowerCase()).not.toMatch(/zed|extension/);
    }
    expect(cargo).toMatch(/crate-type = \["cdylib"/);
    expect(cargo).toMatch(/zed_extension_api = "0\.7/);
    expect(readFileSync(`${REPO}zed-extension/LICENSE`, 'utf8')).toContain('Apache License');
  });

  it('lists a broad set of languages by their Zed names, each once', () => {
    const block = /languages = \[([\s\S]*?)\]/.exec(manifest)?.[1] ?? '';
    const languages = [...block.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(languages).size).toBe(languages.length);
    for (const name of ['Rust', 'TypeScript', 'TSX', 'JavaScript', 'Python', 'Go', 'C', 'C++', 'Java', 'Ruby', 'Markdown', 'Shell Script', 'Plain Text']) {
      expect(languages).toContain(name);
    }
    expect(languages.length).toBeGreaterThanOrEqual(50);
  });
});
