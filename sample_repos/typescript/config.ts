/**
 * Configuration loading helpers for the inventory service.
 */

import * as path from "path";

/** Settings that control the inventory service. */
export interface Config {
  maxItems: number;
  currency: string;
  dataDir: string;
}

/** Partial settings as read from disk. */
export type RawConfig = Partial<Config>;

/** Default settings used when a key is missing. */
const DEFAULTS: Config = { maxItems: 100, currency: "USD", dataDir: "data" };

/** Parse a JSON config document, falling back to defaults. */
export function parseConfig(text: string): Config {
  const raw: RawConfig = text.trim() ? JSON.parse(text) : {};
  const merged = { ...DEFAULTS, ...raw };
  merged.dataDir = path.resolve(merged.dataDir);
  return merged;
}

/** Restrict value to the closed interval [low, high]. */
export function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(value, high));
}

/** Namespace of helpers for validating config values. */
export namespace Validation {
  /** Return true when the currency code looks valid. */
  export function isCurrency(code: string): boolean {
    return /^[A-Z]{3}$/.test(code);
  }
}
