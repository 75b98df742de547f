/**
 * Configuration loading helpers for the inventory views.
 */

import { useMemo } from "react";

/** Settings that control the inventory views. */
export interface Config {
  maxItems: number;
  currency: string;
}

const DEFAULTS: Config = { maxItems: 100, currency: "USD" };

/** Parse a JSON config document, falling back to defaults. */
export function parseConfig(text: string): Config {
  const raw: Partial<Config> = text.trim() ? JSON.parse(text) : {};
  return { ...DEFAULTS, ...raw };
}

/** Restrict value to the closed interval [low, high]. */
export function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(value, high));
}

/** Hook that memoizes the parsed config for a source string. */
export function useConfig(text: string): Config {
  return useMemo(() => parseConfig(text), [text]);
}

/** Displays the active currency. */
export function CurrencyLabel({ config }: { config: Config }) {
  return <em>{config.currency}</em>;
}
