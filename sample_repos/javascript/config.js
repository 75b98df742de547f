/**
 * Configuration loading helpers for the inventory service.
 * @module config
 */

import fs from "node:fs";

/** Default settings used when no config file exists. */
export const DEFAULTS = Object.freeze({ maxItems: 100, currency: "USD" });

/**
 * Parse a JSON config file, falling back to defaults.
 * @param {string} path
 * @returns {object}
 */
export function parseConfig(path) {
  if (!fs.existsSync(path)) {
    return { ...DEFAULTS };
  }
  const raw = fs.readFileSync(path, "utf8");
  return mergeDefaults(JSON.parse(raw));
}

/**
 * Merge user settings over the defaults.
 * @param {object} settings
 */
function mergeDefaults(settings) {
  return { ...DEFAULTS, ...settings };
}

/**
 * Restrict value to the closed interval [low, high].
 * @param {number} value
 * @param {number} low
 * @param {number} high
 */
export const clamp = (value, low, high) => Math.max(low, Math.min(value, high));
